"""A finished run's chunks, read back for search (local or gs://) without holding the table.

Rows are numbered across the run's chunk files in path order: row r is the r-th row of the
files concatenated. The scoring pass reads the `embedding` column alone, one record batch at a
time (pyarrow `iter_batches`); the second pass reads the other columns of the few rows that
won, from the row groups that hold them.
"""

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from docbeam.pipeline.core import tables
from docbeam.pipeline.io import outputs, storage

BLOCK_ROWS = 8192  # rows per scored block: 12 MiB of float32 at dim 384
HIT_COLUMNS = ("doc_id", "chunk_index", "start_char", "end_char", "page_start", "page_end", "section", "text")


class RunError(ValueError):
    """RUN is no finished docbeam run that search can read (one line naming RUN and why)."""


@dataclass(frozen=True)
class RunChunks:
    run: str
    manifest: dict
    files: tuple[str, ...]  # chunks/*.parquet, path order
    rows: tuple[int, ...]  # rows per file
    dim: int

    @property
    def n_rows(self) -> int:
        return sum(self.rows)

    def fingerprint(self) -> str:
        """What an index built from these chunks is tied to: the run's id and its chunk files'
        names and row counts (a rerun with --overwrite, or any other run, differs)."""
        parts = [
            self.manifest.get("run_id", ""),
            *(f"{f.rsplit('/', 1)[-1]}:{n}" for f, n in zip(self.files, self.rows)),
        ]
        return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:32]


def open_run(run: str) -> RunChunks:
    """The run's manifest and chunk files (their footers only)."""
    run = run.rstrip("/") or run
    manifest_path = tables.join(run, tables.MANIFEST)
    if not storage.exists(manifest_path):
        raise RunError(f"{run}: no {tables.MANIFEST} (is it the --output of a finished docbeam run?)")
    try:
        manifest = json.loads(storage.read_text(manifest_path))
        dim = int(manifest["model"]["dim"])
    except (ValueError, KeyError, TypeError) as exc:
        raise RunError(f"{manifest_path}: not a docbeam manifest ({type(exc).__name__}: {exc})") from None
    files = tuple(outputs.files(run, tables.CHUNKS, ".parquet"))
    rows = []
    for f in files:
        with storage.open_read(f) as fh:
            meta = pq.ParquetFile(fh).metadata
            rows.append(meta.num_rows)
    return RunChunks(run, manifest, files, tuple(rows), dim)


def _matrix(column: pa.Array, dim: int) -> np.ndarray:
    """A fixed_size_list<float32>[dim] column as an [n, dim] float32 array (nulls as zeros)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        column = column.fill_null(pa.scalar([0.0] * dim, column.type))
    return column.flatten().to_numpy(zero_copy_only=False).reshape(len(column), dim).astype(np.float32, copy=False)


def embedding_blocks(chunks: RunChunks, block_rows: int = BLOCK_ROWS) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, [n, dim] float32) for every record batch of every chunk file, in row order."""
    start = 0
    for path, n in zip(chunks.files, chunks.rows):
        read = 0
        with storage.open_read(path) as fh:
            # pre_buffer=False: with it, pyarrow keeps every row group's column chunk it has
            # read buffered until the file is closed (measured: the whole column in memory).
            for batch in pq.ParquetFile(fh, pre_buffer=False).iter_batches(
                batch_size=block_rows, columns=["embedding"], use_threads=False
            ):
                yield start + read, _matrix(batch.column(0), chunks.dim)
                read += batch.num_rows
        if read != n:  # row numbers would no longer name the rows read back for the hits
            raise RunError(f"{path}: {read} rows read, {n} when the run was opened; the file changed during search")
        start += n


def read_rows(chunks: RunChunks, rows: list[int], columns: tuple[str, ...] = HIT_COLUMNS) -> dict[int, dict]:
    """The given columns of the given rows, read from the row groups that hold them only."""
    wanted = sorted(set(rows))
    out: dict[int, dict] = {}
    start = 0
    for path, n in zip(chunks.files, chunks.rows):
        mine = [r - start for r in wanted if start <= r < start + n]
        if mine:
            with storage.open_read(path) as fh:
                pf = pq.ParquetFile(fh)
                have = [c for c in columns if c in pf.schema_arrow.names]
                group_start = 0
                for g in range(pf.metadata.num_row_groups):
                    size = pf.metadata.row_group(g).num_rows
                    local = [r for r in mine if group_start <= r < group_start + size]
                    if local:
                        table = pf.read_row_group(g, columns=have)
                        for r in local:
                            row = table.slice(r - group_start, 1).to_pylist()[0]
                            out[start + r] = {c: row.get(c) for c in columns}
                    group_start += size
        start += n
    return out
