"""A run's `_index/`: `chunks.faiss` (the IVF-Flat index, ids = chunk row numbers) and
`index.json` (what it was built from). An index is used only while it matches the run's chunks
(`RunChunks.fingerprint`: the run's id, its chunk files and their row counts); otherwise search
says so and searches exactly. Both files are the run's, held to run_files' rules, and the index
to index_check's before faiss reads it."""

import datetime as dt
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from docbeam.pipeline.core import tables
from docbeam.pipeline.io import storage
from docbeam.pipeline.search import index as ivf
from docbeam.pipeline.search import index_check, run_chunks
from docbeam.pipeline.search.run_chunks import RunChunks
from docbeam.pipeline.search.run_files import RunError, json_object, regular_inside

INDEX_FILE, RECORD_FILE = tables.INDEX_FILES
KIND = "faiss-ivf-flat"


def paths(run: str) -> tuple[str, str]:
    return tables.join(run, tables.INDEX, INDEX_FILE), tables.join(run, tables.INDEX, RECORD_FILE)


def build(chunks: RunChunks) -> dict:
    """Build the run's index from its chunks and write `_index/`; returns its record."""
    import faiss

    if chunks.n_rows == 0:
        raise RunError(f"{chunks.run}: the run has no chunks to index")
    start = time.perf_counter()
    index = ivf.build_ivf(lambda: run_chunks.embedding_blocks(chunks), chunks.n_rows, chunks.dim)
    seconds = time.perf_counter() - start
    record = {
        "kind": KIND,
        "fingerprint": chunks.fingerprint(),
        "rows": chunks.n_rows,
        "dim": chunks.dim,
        "lists": int(index.nlist),
        "nprobe": ivf.NPROBE,
        "faiss": faiss.__version__,
        "build_seconds": round(seconds, 2),
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
    index_path, record_path = paths(chunks.run)
    with tempfile.TemporaryDirectory() as tmp:
        local = os.path.join(tmp, INDEX_FILE)
        faiss.write_index(index, local)
        del index
        # The index first, its record last: a record names an index file that is complete.
        storage.write_bytes(index_path, Path(local).read_bytes())
    storage.write_text(record_path, json.dumps(record, indent=2))
    return record


def stale_reason(chunks: RunChunks, record: dict) -> str | None:
    """Why the index recorded by `record` does not fit the run's chunks now (None: it fits)."""
    if record.get("kind") != KIND:
        return f"it is a {record.get('kind')!r} index, not {KIND}"
    if record.get("rows") != chunks.n_rows:
        return f"it holds {record.get('rows')} chunks, the run has {chunks.n_rows}"
    if record.get("fingerprint") != chunks.fingerprint():
        return "the run's chunk files changed since it was built"
    return None


def load(chunks: RunChunks) -> tuple[object | None, str]:
    """(the run's index memory-mapped, "") when `_index/` fits the run's chunks; (None, why not)
    when it is stale ("" when there is no index at all). A gs:// run's index is copied to a local
    cache once (named by its fingerprint), then mapped. A damaged or foreign index is refused
    (RunError): it is the run's own file, and `--exact` or `docbeam index` answers it."""
    import faiss

    index_path, record_path = paths(chunks.run)
    if not storage.exists(record_path):
        return None, ""
    record = json_object(regular_inside(chunks.run, record_path))
    why = stale_reason(chunks, record)
    if why:
        return (
            None,
            f"{tables.join(chunks.run, tables.INDEX)} is stale ({why}); rebuild it with `docbeam index {chunks.run}`",
        )
    _check_file(chunks, regular_inside(chunks.run, index_path))  # on gs://: before it is downloaded
    local = index_path
    if storage.is_gcs(index_path):
        cached = Path.home() / ".cache" / "docbeam" / "index" / f"{record['fingerprint']}.faiss"
        if not cached.exists():
            storage.atomic_write_local(cached, storage.read_bytes(index_path))
        local = str(cached)
        _check_file(chunks, local)
    try:
        return faiss.read_index(local, faiss.IO_FLAG_MMAP), ""
    except (RuntimeError, MemoryError) as exc:  # what its headers did not tell: faiss's own check
        said = str(exc).splitlines()[0].rpartition("Error: ")[2]  # without faiss's C++ signature
        raise _damaged(chunks, index_path, f"faiss cannot read it ({said})") from None


def names_chunks(chunks: RunChunks, rows: np.ndarray) -> bool:
    """Whether every query's answer from the index names a chunk of the run (False: search
    exactly). The index's ids are row numbers, -1 where it found fewer than k; an id outside
    the run beside ones inside it is a damaged index (RunError)."""
    inside = (rows >= 0) & (rows < chunks.n_rows)
    if not inside.any(axis=-1).all():
        return False
    outside = rows[~inside & (rows != -1)]
    if outside.size:
        where = f"the run's are 0 to {chunks.n_rows - 1}"
        raise _damaged(chunks, paths(chunks.run)[0], f"it names chunk {outside[0]}; {where}")
    return True


def _check_file(chunks: RunChunks, path: str) -> None:
    try:
        why = index_check.problem(path, chunks.n_rows, chunks.dim)
    except OSError as exc:  # unreadable here (permissions)
        why = exc.strerror or str(exc)
    if why:
        raise _damaged(chunks, path, why)


def _damaged(chunks: RunChunks, path: str, why: str) -> RunError:
    return RunError(f"{path}: {why}; rebuild it with `docbeam index {chunks.run}`, or search with --exact")
