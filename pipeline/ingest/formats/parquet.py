"""Parquet: one document per row; --text-field / --id-field columns, the rest as metadata."""

from collections.abc import Iterator
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from docbeam.pipeline.core.records import reject
from docbeam.pipeline.ingest.fields import STAGE, Record, from_fields
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.sandbox import Sandbox


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    try:
        pf = pq.ParquetFile(f)
    except (pa.ArrowInvalid, OSError) as exc:
        yield reject(STAGE, "invalid_parquet", path, f"not a readable Parquet file: {exc}")
        return
    schema = pf.schema_arrow
    field = schema.field(cfg.text_field) if cfg.text_field in schema.names else None
    if field is None or not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
        found = ", ".join(f"{f.name}: {f.type}" for f in schema)
        text_like = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
        hint = f" (use --text-field {text_like[0]}?)" if text_like else ""
        yield reject(STAGE, "wrong_schema", path, f"needs a string column {cfg.text_field!r}; found {found}{hint}")
        return
    if pf.metadata.num_rows == 0:
        yield reject(STAGE, "empty_file", path, "no rows")
        return
    row = 0
    for batch in pf.iter_batches(batch_size=1024):
        for obj in batch.to_pylist():
            yield from_fields(path, row, obj, cfg, "parquet")
            row += 1
