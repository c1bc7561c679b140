"""`--dims` / `--vector-dtype` in the graph: the `embedding` of document and chunk rows, from the
encoder's full float32 vectors to what the run stores (core.vector_format does the arithmetic).

    rows (full float32) -> truncate + renormalise -> [int8: ranges = min/max over every row of
    the table, a global combine, unless the plan fixed them] -> quantise -> the Parquet writers

int8 ranges are calibrated per table (documents' vectors are means of chunks': another spread)
on the vectors of this job, and written to _vectors/<wave>-<table>-ranges.json; the launcher
keeps the first wave's as the run's (core.vector_format.RANGES_FILE) and fixes them for later
waves, so every int8 code of a run decodes with one set of ranges.
"""

import json

import apache_beam as beam
import numpy as np

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.vector_format import INT8, VectorFormat, calibration_ranges, merge_ranges, quantize

VECTOR_TABLES = (tables.DOCUMENTS, tables.CHUNKS)


def ranges_prefix(output: str, file_prefix: str, table: str) -> str:
    """Where a job writes the int8 ranges it calibrated for `table` (one JSON line)."""
    return tables.join(output, tables.VECTORS, f"{file_prefix}-{table}-ranges")


class RangesFn(beam.CombineFn):
    """Per dimension, the minimum and maximum of every vector: [2, dim] float32, or None (no rows)."""

    def create_accumulator(self):
        return None

    def add_input(self, acc, vector):
        v = np.asarray(vector, np.float32)[None, :]
        return merge_ranges(acc, np.vstack((v, v)))

    def add_inputs(self, acc, vectors):
        vectors = list(vectors)
        return merge_ranges(acc, calibration_ranges(np.stack(vectors))) if vectors else acc

    def merge_accumulators(self, accs):
        out = None
        for a in accs:
            out = merge_ranges(out, a)
        return out

    def extract_output(self, acc):
        return acc


def _truncated(row: dict, fmt: VectorFormat) -> dict:
    return {**row, "embedding": fmt.truncated(np.asarray(row["embedding"], np.float32)[None, :])[0]}


def _quantised(row: dict, fmt: VectorFormat, ranges) -> dict:
    r = None if ranges is None else np.asarray(ranges, np.float32)
    return {**row, "embedding": quantize(np.asarray(row["embedding"], np.float32)[None, :], fmt.dtype, r)[0]}


def shape_rows(rows: beam.PCollection, table: str, plan) -> beam.PCollection:
    """A vector table's rows (full float32 vectors) as the plan's format stores them."""
    fmt: VectorFormat = plan.vector_format
    name = table.capitalize()
    truncated = rows | f"{name}Truncate" >> beam.Map(_truncated, fmt)
    if fmt.dtype != INT8:
        return truncated | f"{name}Quantise" >> beam.Map(_quantised, fmt, None)
    fixed = (plan.vector_ranges or {}).get(table)
    if fixed is not None:
        ranges = rows.pipeline | f"{name}FixedRanges" >> beam.Create([np.asarray(fixed, np.float32)])
    else:
        ranges = (
            truncated
            | f"{name}Vectors" >> beam.Map(lambda r: r["embedding"])
            | f"{name}Calibrate" >> beam.CombineGlobally(RangesFn())
        )
        (
            ranges
            | f"{name}RangesFound" >> beam.Filter(lambda r: r is not None)
            | f"{name}RangesJson" >> beam.Map(lambda r: json.dumps(np.asarray(r, np.float32).tolist()))
            | f"Write{name}Ranges"
            >> beam.io.WriteToText(
                ranges_prefix(plan.output, plan.file_prefix, table), file_name_suffix=".json", shard_name_template=""
            )
        )
    return truncated | f"{name}Quantise" >> beam.Map(_quantised, fmt, beam.pvalue.AsSingleton(ranges))


def shaped(fresh: dict[str, beam.PCollection], copied: dict[str, beam.PCollection], plan) -> dict:
    """The output tables, encoded and --reuse-copied rows together, with the vector tables in the
    plan's format. Copied rows are converted with the encoded ones when the previous run kept
    full float32 vectors (Reuse.convert_vectors); otherwise they already have this format."""
    fmt: VectorFormat = plan.vector_format
    convert = plan.reuse is not None and plan.reuse.convert_vectors
    out = dict(fresh)
    for table in VECTOR_TABLES:
        if fmt.default:
            continue
        rows = out[table]
        if convert and table in copied:
            rows = (rows, copied[table]) | f"{table.capitalize()}ToConvert" >> beam.Flatten()
        out[table] = shape_rows(rows, table, plan)
    for table, rows in copied.items():  # documents copied from --reuse join the encoded ones
        if fmt.default or not convert or table not in VECTOR_TABLES:
            out[table] = (out[table], rows) | f"With{table.capitalize()}Reused" >> beam.Flatten()
    return out
