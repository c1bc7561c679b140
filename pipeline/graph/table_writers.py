"""Writers of the output tables (their names, paths and schemas are core.tables')."""

import json

import apache_beam as beam
import numpy as np
import pyarrow as pa
from apache_beam.transforms.window import GlobalWindows

from docbeam.pipeline.core.records import Rejection
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost.metering import StageMeter

ROWS_PER_TABLE = 2048
# The vector columns' Arrow types (float32, or what --vector-dtype stores: float16, int8, packed
# bits) as numpy's; Arrow's own `to_pandas_dtype` needs pandas, which docbeam does not install.
VECTOR_NUMPY = {pa.float32(): np.float32, pa.float16(): np.float16, pa.int8(): np.int8, pa.uint8(): np.uint8}


def to_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    columns = []
    for f in schema:
        values = [r.get(f.name) for r in rows]
        if pa.types.is_fixed_size_list(f.type):
            kind = f.type.value_type
            np_kind = VECTOR_NUMPY[kind]
            flat = (
                np.concatenate([np.asarray(v, np_kind).reshape(-1) for v in values]) if values else np.zeros(0, np_kind)
            )
            columns.append(pa.FixedSizeListArray.from_arrays(pa.array(flat, kind), f.type.list_size))
        else:
            columns.append(pa.array(values, f.type))
    return pa.Table.from_arrays(columns, schema=schema)


class ToArrow(beam.DoFn):
    """Rows -> Arrow tables of up to ROWS_PER_TABLE rows; the `write` stage's metered work."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema

    def setup(self):
        self.meter = StageMeter(Stage.WRITE)

    def start_bundle(self):
        self.rows: list[dict] = []

    def _table(self) -> pa.Table:
        with self.meter.timed():
            table = to_table(self.rows, self.schema)
        self.meter.add(elements_in=len(self.rows), elements_out=len(self.rows), bytes_out=table.nbytes)
        self.rows = []
        return table

    def process(self, row: dict):
        self.rows.append(row)
        if len(self.rows) >= ROWS_PER_TABLE:
            yield self._table()

    def finish_bundle(self):
        if self.rows:
            yield GlobalWindows.windowed_value(self._table())


def write_parquet(pcoll, prefix: str, schema: pa.Schema, name: str):
    return (
        pcoll
        | f"{name}ToArrow" >> beam.ParDo(ToArrow(schema))
        | f"Write{name}" >> beam.io.WriteToParquetBatched(prefix, schema, codec="zstd", file_name_suffix=".parquet")
    )


class ErrorToJson(beam.DoFn):
    def setup(self):
        self.meter = StageMeter(Stage.WRITE)

    def process(self, rejection: Rejection):
        line = json.dumps(rejection.to_json(), sort_keys=True)
        self.meter.add(elements_in=1, elements_out=1, bytes_out=len(line))
        yield line


def write_errors(pcoll, prefix: str):
    return (
        pcoll
        | "ErrorsToJson" >> beam.ParDo(ErrorToJson())
        | "WriteErrors" >> beam.io.WriteToText(prefix, file_name_suffix=".jsonl")
    )
