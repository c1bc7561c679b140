"""Parquet: one document per row; --text-field / --id-field columns, the rest as metadata.

Read in bounded pieces, so a file of a few KiB cannot take a worker's memory: a row group
whose footer declares more than --max-decompressed-bytes is rejected unread (its row range
named); string columns are read as dictionaries, so a dictionary-encoded value repeated in
every row is held once, and each row's cell sizes are checked before any row becomes Python
objects (a cell over --max-doc-bytes rejects its row unread). The footer can lie; the value
sizes checked here are those of the decoded data, not the footer's. A row group that cannot
be read (a corrupt page) rejects the rows from where it broke to the group's end; the rows
before it and the groups after it still come out.
"""

from collections.abc import Iterator
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from docbeam.pipeline.core.records import Rejection, reject
from docbeam.pipeline.ingest.fields import STAGE, Record, from_fields
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.sandbox import Sandbox

BATCH_ROWS = 1024
PIECE_BYTES = 64 << 20  # strings turned into Python objects at a time (at least one row)


def _text_type(t: pa.DataType) -> bool:
    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _stringy(t: pa.DataType) -> bool:
    """Text or bytes (dictionary-encoded or not): the cells whose size is checked."""
    v = t.value_type if pa.types.is_dictionary(t) else t
    return _text_type(v) or pa.types.is_binary(v) or pa.types.is_large_binary(v)


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    try:
        pf = pq.ParquetFile(f)
        schema = pf.schema_arrow
        strings = [field.name for field in schema if _stringy(field.type)]
        pf = pq.ParquetFile(f, metadata=pf.metadata, read_dictionary=strings)
    except (pa.ArrowInvalid, OSError) as exc:
        yield reject(STAGE, "invalid_parquet", path, f"not a readable Parquet file: {exc}")
        return
    field = schema.field(cfg.text_field) if cfg.text_field in schema.names else None
    if field is None or not _text_type(field.type):
        found = ", ".join(f"{f.name}: {f.type}" for f in schema)
        text_like = [f.name for f in schema if _text_type(f.type)]
        hint = f" (use --text-field {text_like[0]}?)" if text_like else ""
        yield reject(STAGE, "wrong_schema", path, f"needs a string column {cfg.text_field!r}; found {found}{hint}")
        return
    meta = pf.metadata
    if meta.num_rows == 0:
        yield reject(STAGE, "empty_file", path, "no rows")
        return
    first, total = 0, 0
    for group in range(meta.num_row_groups):
        rows = meta.row_group(group).num_rows
        # The bound is the file's, as a gzip stream's is: 12 row groups of 60 MB each pass a
        # per-group check of 100 MB and are 720 MB all the same.
        total += _declared(meta, group)
        if total > cfg.max_decompressed_bytes:
            problem = f"the file decompresses to more than --max-decompressed-bytes {cfg.max_decompressed_bytes}"
            yield _rows_lost(path, group, first, meta.num_rows, problem, "decompressed_too_large")
            return
        yield from _group(path, pf, group, first, rows, cfg)
        first += rows


def _declared(meta: pq.FileMetaData, group: int) -> int:
    """The uncompressed bytes a row group's column chunks declare."""
    chunks = meta.row_group(group)
    return sum(chunks.column(c).total_uncompressed_size for c in range(chunks.num_columns))


def _group(path: str, pf: pq.ParquetFile, group: int, first: int, rows: int, cfg: ParseConfig) -> Iterator[Record]:
    """Rows [first, first + rows) of row group `group` (its size checked by `parse`)."""
    row = first
    try:
        for batch in pf.iter_batches(batch_size=BATCH_ROWS, row_groups=[group]):
            yield from _batch(path, batch, row, cfg)
            row += batch.num_rows
    except (pa.ArrowException, OSError) as exc:  # a corrupt page: this group's remaining rows
        yield _rows_lost(path, group, row, first + rows, f"unreadable ({exc})", "invalid_parquet")


def _rows_lost(path: str, group: int, start: int, end: int, problem: str, code: str) -> Rejection:
    message = f"{path} rows {start}-{end - 1} (row group {group}): {problem}; these rows are not read"
    return Rejection(source=path, doc_id=None, stage=STAGE, error=code, message=message, row=start)


def _batch(path: str, batch: pa.RecordBatch, first: int, cfg: ParseConfig) -> Iterator[Record]:
    sizes = np.zeros(batch.num_rows, dtype=np.int64)  # string bytes per row
    biggest = np.zeros(batch.num_rows, dtype=np.int64)  # the largest cell per row
    for column in batch.columns:
        if not _stringy(column.type):
            continue
        if pa.types.is_dictionary(column.type):  # never expanded: lengths of the dictionary, by index
            lengths = pc.take(pc.binary_length(column.dictionary), column.indices)
        else:
            lengths = pc.binary_length(column)
        cells = lengths.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        sizes += cells
        np.maximum(biggest, cells, out=biggest)
    start = 0
    while start < batch.num_rows:
        if biggest[start] > cfg.max_doc_bytes:
            problem = f"a field of {biggest[start]} bytes, more than --max-doc-bytes {cfg.max_doc_bytes}"
            yield reject(STAGE, "document_too_large", path, problem, row=first + start)
            start += 1
            continue
        end, held = start, 0  # the rows turned into Python objects together: at most PIECE_BYTES (or one row)
        while end < batch.num_rows and biggest[end] <= cfg.max_doc_bytes:
            if end > start and held + sizes[end] > PIECE_BYTES:
                break
            held += sizes[end]
            end += 1
        for offset, obj in enumerate(_rows(batch.slice(start, end - start))):
            row = first + start + offset
            if obj is None:  # the rule of every format (csv, text): bytes that are not UTF-8 reject their record
                yield reject(STAGE, "invalid_utf8", path, "a string field holds bytes that are not UTF-8", row=row)
            else:
                yield from_fields(path, row, obj, cfg, "parquet")
        start = end


def _rows(piece: pa.RecordBatch) -> list[dict | None]:
    """The rows as Python objects; None for a row with a string cell that is not UTF-8. Arrow
    does not check that on reading, and one such cell (ED A0 80: a surrogate written as UTF-8)
    fails the whole piece, so then its rows are read one by one."""
    try:
        return piece.to_pylist()
    except UnicodeDecodeError:
        pass
    out: list[dict | None] = []
    for i in range(piece.num_rows):
        try:
            out.append(piece.slice(i, 1).to_pylist()[0])
        except UnicodeDecodeError:
            out.append(None)
    return out
