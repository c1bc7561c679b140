"""A finished run's chunks, read back for search (local or gs://) without holding the table.

Rows are numbered across the run's chunk files in path order: row r is the r-th row of the
files concatenated. The scoring pass reads the `embedding` column alone, one record batch at a
time (pyarrow `iter_batches`); the second pass reads the other columns of the few rows that
won, from the row groups that hold them.
"""

import contextlib
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.vector_format import FLOAT16, FLOAT32, INT8, STORED, VECTOR_DTYPES, VectorFormat, dequantize
from docbeam.pipeline.io import outputs, storage, vector_ranges
from docbeam.pipeline.search.run_files import RunError, json_object, regular_inside

BLOCK_ROWS = 8192  # rows per scored block: 12 MiB of float32 at dim 384
HIT_COLUMNS = ("doc_id", "chunk_index", "start_char", "end_char", "page_start", "page_end", "section", "text")
MAX_DIM = 1 << 16  # model.dim past this is no embedding model's (and would size blocks from a tampered number)
# The manifest's model fields search reads besides `dim`, and their types (each may be absent or null).
MODEL_FIELDS = {
    "name": str,
    "path": str,
    "dtype": str,
    "max_seq_len": int,
    "stride": int,
    "source": dict,
    "files_sha256": dict,
}


def _is_text(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


# The types a hit's columns may have (what format and --json print), where a chunk file has them.
_HIT_TYPES = {c: _is_text for c in ("doc_id", "section", "text")} | {
    c: pa.types.is_integer for c in ("chunk_index", "start_char", "end_char", "page_start", "page_end")
}
# What a Parquet reader raises on a truncated or garbage file: pyarrow's own errors, and the
# OSError (ArrowIOError) of a page that does not decode.
PARQUET_ERRORS = (pa.ArrowException, OSError)


@dataclass(frozen=True)
class RunChunks:
    run: str
    manifest: dict
    files: tuple[str, ...]  # chunks/*.parquet, path order
    rows: tuple[int, ...]  # rows per file
    dim: int  # dimensions of the stored vectors (--dims, else the model's)
    fmt: VectorFormat | None = None  # None: full float32 vectors
    ranges: np.ndarray | None = None  # int8: the chunks' calibration ranges [2, dim]

    @property
    def vector_format(self) -> VectorFormat:
        return self.fmt or VectorFormat(self.dim)

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
    """The run's manifest and chunk files (their footers only). Every file is checked before it
    is opened (run_files), then each is held to what docbeam writes: RunError names the first
    that is not."""
    run = run.rstrip("/") or run
    manifest_path = tables.join(run, tables.MANIFEST)
    if not storage.exists(manifest_path):
        raise RunError(f"{run}: no {tables.MANIFEST} (is it the --output of a finished docbeam run?)")
    regular_inside(run, manifest_path)
    files = tuple(regular_inside(run, f) for f in outputs.files(run, tables.CHUNKS, ".parquet"))
    manifest = json_object(manifest_path)
    model_dim = _model_dim(manifest_path, manifest.get("model"))
    fmt = _vector_format(manifest_path, manifest.get("vectors"), model_dim)
    rows = tuple(_footer_rows(f, fmt) for f in files)
    recorded = (manifest.get("counts") or {}).get("chunks") if isinstance(manifest.get("counts"), dict) else None
    if type(recorded) is int and recorded > 0 and sum(rows) == 0:  # chunks/ gone, emptied, or no folder
        where = tables.folder(run, tables.CHUNKS).rstrip("/")
        raise RunError(f"{where}: holds no chunks, but {tables.MANIFEST} records {recorded:,}")
    ranges = None
    if fmt.dtype == INT8:
        found = vector_ranges.read(run) or {}
        ranges = found.get(tables.CHUNKS)
        if ranges is None or ranges.shape != (2, fmt.dim):
            raise RunError(f"{vector_ranges.path(run)}: the int8 run's chunk ranges are missing or not 2 x {fmt.dim}")
    return RunChunks(run, manifest, files, rows, fmt.dim, fmt, ranges)


def _vector_format(path: str, record: object, model_dim: int) -> VectorFormat:
    """The manifest's `vectors` record (--dims, --vector-dtype); a run without one: full float32."""
    if record is None:
        return VectorFormat(model_dim)
    if not isinstance(record, dict) or record.get("dtype") not in VECTOR_DTYPES or type(record.get("dims")) is not int:
        raise RunError(f"{path}: vectors is {_short(record)}, not a --dims/--vector-dtype record")
    try:
        return VectorFormat.of_record(record, model_dim)
    except ValueError as exc:
        raise RunError(f"{path}: vectors: {exc}") from None


def _model_dim(path: str, model: object) -> int:
    """The manifest's `model.dim`, once the model record search reads has docbeam's types."""
    if not isinstance(model, dict):
        raise RunError(f"{path}: not a docbeam manifest (its model record is {_short(model)})")
    dim = model.get("dim")
    if type(dim) is not int or not 1 <= dim <= MAX_DIM:  # type(): True is an int to isinstance
        raise RunError(f"{path}: model.dim is {_short(dim)}, not a vector length (1 to {MAX_DIM:,})")
    for key, kind in MODEL_FIELDS.items():
        value = model.get(key)
        if value is not None and (type(value) is bool or not isinstance(value, kind)):
            raise RunError(f"{path}: model.{key} is {_short(value)}, not a {kind.__name__}")
    source, pins = model.get("source") or {}, model.get("files_sha256") or {}
    named = ("hub", "revision") if "hub" in source else ()  # query.model_spec reads both
    if not all(isinstance(source.get(k), str) for k in named) or not isinstance(source.get("package", ""), str):
        raise RunError(f"{path}: model.source is {_short(source)}, not a hub, package or path record")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in pins.items()):
        raise RunError(f"{path}: model.files_sha256 is {_short(pins)}, not file names and hashes")
    return dim


def _short(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _footer_rows(path: str, fmt: VectorFormat) -> int:
    """The chunk file's row count, from its footer, once its `embedding` column is what the
    manifest's vector format stores (`_matrix` reads it): `dim` floats, int8 or packed bytes."""
    dim = fmt.width
    try:
        with storage.open_read(path) as fh:
            pf = pq.ParquetFile(fh)
            schema, rows = pf.schema_arrow, pf.metadata.num_rows
    except PARQUET_ERRORS as exc:
        raise RunError(f"{path}: not a readable Parquet file ({_first_line(exc)})") from None
    i = schema.get_field_index("embedding")  # -1: none, or more than one
    if i < 0:
        raise RunError(f"{path}: no embedding column (one of its own)")
    kind = schema.field(i).type
    if not (pa.types.is_fixed_size_list(kind) and kind.value_type == tables.EMBEDDING_VALUES[fmt.dtype]):
        what = f"vectors of {dim} floats" if fmt.dtype == FLOAT32 else f"{fmt.dtype} vectors of {dim} values"
        raise RunError(f"{path}: its embedding column is {kind}, not {what}")
    if kind.list_size != dim and fmt.default:
        raise RunError(f"{path}: its vectors have {kind.list_size} floats, the manifest's model.dim is {dim}")
    if kind.list_size != dim:
        raise RunError(f"{path}: its vectors have {kind.list_size} values, the manifest's vectors record says {dim}")
    for field in schema:
        if field.name in _HIT_TYPES and not (_HIT_TYPES[field.name](field.type) or pa.types.is_null(field.type)):
            raise RunError(f"{path}: its {field.name} column is {field.type}, not what docbeam writes")
    return rows


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _matrix(column: pa.Array, dim: int, kind=np.float32) -> np.ndarray:
    """A fixed_size_list<...>[dim] column as an [n, dim] array of `kind` (nulls as zeros)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        column = column.fill_null(pa.scalar([0] * dim, column.type))
    return column.flatten().to_numpy(zero_copy_only=False).reshape(len(column), dim).astype(kind, copy=False)


def embedding_blocks(chunks: RunChunks, block_rows: int = BLOCK_ROWS) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, [n, dim] float32) for every record batch of every chunk file, in row order;
    int8 and binary vectors dequantised (core.vector_format)."""
    fmt = chunks.vector_format
    for first, block in stored_blocks(chunks, block_rows):
        yield first, block if fmt.dtype == FLOAT32 else dequantize(block, fmt.dtype, fmt.dim, chunks.ranges)


def stored_blocks(chunks: RunChunks, block_rows: int = BLOCK_ROWS) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, [n, width]) as stored: float32, float16, int8 codes or packed bits."""
    fmt = chunks.vector_format
    kind = np.float32 if fmt.dtype in (FLOAT32, FLOAT16) else STORED[fmt.dtype]
    start = 0
    for path, n in zip(chunks.files, chunks.rows):
        read = 0
        with _reading(path), storage.open_read(path) as fh:
            # pre_buffer=False: with it, pyarrow keeps every row group's column chunk it has
            # read buffered until the file is closed (measured: the whole column in memory).
            for batch in pq.ParquetFile(fh, pre_buffer=False).iter_batches(
                batch_size=block_rows, columns=["embedding"], use_threads=False
            ):
                yield start + read, _matrix(batch.column(0), fmt.width, kind)
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
            with _reading(path), storage.open_read(path) as fh:
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


@contextlib.contextmanager
def _reading(path: str) -> Iterator[None]:
    """A page that does not decode (its footer did, when the run was opened) as one RunError."""
    try:
        yield
    except PARQUET_ERRORS as exc:
        raise RunError(f"{path}: a damaged Parquet file ({_first_line(exc)})") from None
