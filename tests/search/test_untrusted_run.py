"""`docbeam search` on a run folder someone else made (a bucket, an archive): it reads only
regular files inside the run, bounds what it reads, and answers a tampered file with one line
naming it (exit 2), never a traceback, a hang or another file's text.

Each hostile file is made in a few lines in the test's tmp folder, on a tiny run of random
vectors; the query's vector is fixed (no model loads).
"""

import contextlib
import json
import os
import shutil
import struct
import threading
from pathlib import Path

import faiss
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline import cli
from docbeam.pipeline.core import tables
from docbeam.pipeline.search import hits as hits_mod
from docbeam.pipeline.search import index_files, query, search_vectors
from docbeam.pipeline.search.run_chunks import RunError, open_run
from docbeam.pipeline.search.topk import normalised

DIM, N = 4, 40
VECTORS = np.random.default_rng(0).normal(size=(N, DIM)).astype(np.float32)
QUERY_VECTOR = np.array([[1.0, 0.0, 0.0, 0.0]], np.float32)
PART = "chunks/part-00000-of-00001.parquet"


def write_chunks(path: Path, vectors: np.ndarray, text: str = "chunk") -> Path:
    rows = [
        {
            "doc_id": f"{text}-{i}",
            "chunk_index": 0,
            "start_char": 0,
            "end_char": 9,
            "embedding": v.tolist(),
            "text": text,
        }
        for i, v in enumerate(vectors)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=tables.chunks_schema(vectors.shape[1])), path)
    return path


@pytest.fixture
def run(tmp_path, monkeypatch) -> Path:
    """A finished run of N chunks (manifest and chunks only); queries embed to QUERY_VECTOR."""
    monkeypatch.setattr(query, "embed_queries", lambda model, texts, override=None: QUERY_VECTOR)
    root = tmp_path / "run"
    write_chunks(root / PART, VECTORS)
    (root / "_manifest.json").write_text(json.dumps({"run_id": "r1", "model": {"name": "m", "dim": DIM}}))
    return root


def search(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["search", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def refused(capsys, run: Path, named: str, *argv: str, query_text: str = "a question") -> str:
    """Search `run`: exit 2 and one line on stderr that starts with the file it names."""
    status, out, err = search(capsys, str(run), query_text, *argv)
    assert (status, out) == (2, ""), err
    assert err.startswith(f"docbeam search: {named}: ") and err.count("\n") == 1, err
    return err


def write_index(run: Path, ids: np.ndarray | None = None, index=None) -> Path:
    """The run's _index/ as `docbeam index` writes it; `ids` (or a whole faiss `index`) replace
    what its chunks.faiss holds, index.json unchanged."""
    index_files.build(open_run(str(run)))
    if ids is not None:
        index = faiss.IndexIVFFlat(faiss.IndexFlatIP(DIM), DIM, 4, faiss.METRIC_INNER_PRODUCT)
        index.train(normalised(VECTORS))
        index.add_with_ids(normalised(VECTORS), ids.astype(np.int64))
    if index is not None:
        faiss.write_index(index, str(run / "_index" / "chunks.faiss"))
    return run / "_index" / "chunks.faiss"


@contextlib.contextmanager
def fifo_watchdog(fifo: Path, data: bytes, after_s: float = 3.0):
    """Search used to block opening `fifo`: if it still waits after `after_s`, this feeds it
    `data` and closes it, so the test fails on its assertions instead of hanging the suite."""
    done = threading.Event()

    def feed() -> None:
        if done.wait(after_s):
            return
        with contextlib.suppress(OSError):  # no reader (ENXIO), or it left (EPIPE)
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.set_blocking(fd, True)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


# ----------------------------------------------------------------------------------------------
# Item 5: only regular files inside the run, read up to a bound
# ----------------------------------------------------------------------------------------------


def test_a_chunk_file_linked_to_a_parquet_outside_the_run_is_refused_unread(run, tmp_path, capsys):
    secret = write_chunks(tmp_path / "elsewhere" / "private.parquet", np.tile(QUERY_VECTOR, (3, 1)), "SECRET")
    (run / "chunks" / "part-00001-of-00002.parquet").symlink_to(secret)
    err = refused(capsys, run, f"{run}/chunks/part-00001-of-00002.parquet")
    assert f"resolves to {secret}, outside the run" in err
    assert "SECRET" not in err


def test_a_link_that_stays_inside_the_run_is_read(run, capsys):
    (run / "kept").mkdir()
    (run / PART).rename(run / "kept" / "part.parquet")
    (run / PART).symlink_to(Path("..") / "kept" / "part.parquet")
    status, out, err = search(capsys, str(run), "a question", "--top-k", "2")
    assert status == 0 and f"2 of {N} chunks" in out, err


@pytest.mark.parametrize("name", ["_manifest.json", PART])
def test_a_fifo_is_refused_without_opening_it(run, capsys, name):
    fifo = run / name
    fifo.unlink()
    os.mkfifo(fifo)
    with fifo_watchdog(fifo, b'{"model": {"dim": 4}}'):
        err = refused(capsys, run, str(fifo))
    assert "a FIFO, not a regular file" in err


def test_index_files_are_held_to_the_same_rule(run, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 1)
    faiss_file = write_index(run)
    elsewhere = tmp_path / "other.faiss"
    faiss_file.rename(elsewhere)
    faiss_file.symlink_to(elsewhere)
    refused(capsys, run, str(faiss_file))
    record = run / "_index" / "index.json"
    record.unlink()
    os.mkfifo(record)
    with fifo_watchdog(record, b"[]"):
        assert "a FIFO, not a regular file" in refused(capsys, run, str(record))


@pytest.mark.parametrize("name", ["_manifest.json", "_index/index.json"])
def test_an_oversize_manifest_or_index_record_is_refused(run, capsys, monkeypatch, name):
    monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 1)
    write_index(run)
    path = run / name
    with path.open("a") as f:  # still valid JSON: trailing white space
        f.write(" " * (16 << 20))
    assert "larger than 16 MiB" in refused(capsys, run, str(path))


# ----------------------------------------------------------------------------------------------
# Item 6: a tampered file is one line naming it, exit 2
# ----------------------------------------------------------------------------------------------


def _page_garbage(column: str):
    """Overwrite the first data page of `column` in the chunk file (its footer stays readable)."""

    def make(run: Path) -> str:
        part = run / PART
        meta = pq.ParquetFile(part).metadata.row_group(0)
        (i,) = [i for i in range(meta.num_columns) if meta.column(i).path_in_schema.split(".")[0] == column]
        data = bytearray(part.read_bytes())
        start = meta.column(i).data_page_offset
        data[start : start + 32] = b"\xff" * 32
        part.write_bytes(bytes(data))
        return str(part)

    return make


def _index_bytes(edit):
    """The run's chunks.faiss as `docbeam index` writes it, then `edit(bytearray)`."""

    def make(run: Path) -> str:
        path = write_index(run)
        data = bytearray(path.read_bytes())
        edit(data)
        path.write_bytes(bytes(data))
        return str(path)

    return make


def _u64_at(offset_of, value: int):
    def edit(data: bytearray) -> None:
        at = offset_of(data)
        assert at > 0
        data[at : at + 8] = struct.pack("<Q", value)

    return edit


def _hnsw(run: Path) -> str:
    index = faiss.IndexHNSWFlat(DIM, 8, faiss.METRIC_INNER_PRODUCT)
    index.add(normalised(VECTORS))
    return str(write_index(run, index=index))


def _chunks(table: pa.Table):
    def make(run: Path) -> str:
        pq.write_table(table, run / PART)
        return str(run / PART)

    return make


def _text(name: str, text: str):
    def make(run: Path) -> str:
        (run / name).parent.mkdir(exist_ok=True)
        (run / name).write_text(text)
        return str(run / name)

    return make


def _truncated(run: Path) -> str:
    data = (run / PART).read_bytes()
    (run / PART).write_bytes(data[: len(data) // 2])
    return str(run / PART)


def _index_record_list(run: Path) -> str:
    write_index(run)
    return _text("_index/index.json", "[]")(run)


TAMPERED = {  # case: (how to make it, what the line says is wrong)
    "wrong vector length": (
        _chunks(pa.Table.from_pylist([{"embedding": [0.5] * 3}], schema=tables.chunks_schema(3))),
        "its vectors have 3 floats, the manifest's model.dim is 4",
    ),
    "ragged embedding": (
        _chunks(pa.table({"embedding": pa.array([[0.5] * 4, [0.5] * 3], pa.list_(pa.float32()))})),
        "its embedding column is list<element: float>, not vectors of 4 floats",
    ),
    "string embedding": (
        _chunks(pa.table({"embedding": ["0.5 0.5 0.5 0.5"]})),
        "its embedding column is string, not vectors of 4 floats",
    ),
    "truncated parquet": (_truncated, "not a readable Parquet file"),
    "garbage parquet": (_text(PART, "PAR1 this is not a parquet file PAR1"), "not a readable Parquet file"),
    "garbage embedding pages": (_page_garbage("embedding"), "a damaged Parquet file"),
    "garbage text pages": (_page_garbage("doc_id"), "a damaged Parquet file"),
    "manifest nested 100k deep": (
        _text("_manifest.json", '{"model": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        "JSON nested too deep",
    ),
    "manifest dim 0": (_text("_manifest.json", '{"model": {"dim": 0}}'), "model.dim is 0, not a vector length"),
    "index.json a list": (_index_record_list, "a JSON list, not an object"),
    "index ids out of range": (
        lambda run: str(write_index(run, ids=np.arange(N) + 1)),
        f"it names chunk {N}; the run's are 0 to {N - 1}",
    ),
    "HNSW index": (_hnsw, "not a faiss IVF-Flat index (it starts b'IHNf'"),
    "nlist 2^50 in the IVF header": (
        _index_bytes(_u64_at(lambda data: 37, 2**50)),
        "it has 1,125,899,906,842,624 lists",
    ),
    "nlist 2^50 in the inverted lists": (
        _index_bytes(_u64_at(lambda data: data.find(b"ilar") + 4, 2**50)),
        "its inverted lists are not 25 lists",
    ),
    "a list past the file's end": (
        _index_bytes(_u64_at(lambda data: data.find(b"full") + 12, 2**40)),
        "faiss cannot read it",
    ),
    "truncated index": (_index_bytes(lambda data: data.__delitem__(slice(len(data) // 2, None))), "(cut short?)"),
}


@pytest.mark.parametrize("case", TAMPERED)
def test_a_tampered_file_is_one_line_naming_it(run, capsys, monkeypatch, case):
    make, says = TAMPERED[case]
    named = make(run)
    if (run / "_index").exists():  # read, however few the run's chunks
        monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 1)
    assert says in refused(capsys, run, named, "--top-k", str(N))


@pytest.mark.parametrize(
    "model",
    [
        {"dim": True},
        {"dim": 4, "source": "hub"},
        {"dim": 4, "source": {"hub": "org/name"}},
        {"dim": 4, "max_seq_len": [256]},
        {"dim": 4, "files_sha256": []},
    ],
    ids=str,
)
def test_the_model_record_search_reads_is_docbeams(run, model):
    (run / "_manifest.json").write_text(json.dumps({"model": model}))
    with pytest.raises(RunError, match=r"_manifest.json: model\.(dim|source|max_seq_len|files_sha256) is "):
        open_run(str(run))


def test_a_query_that_is_not_utf8_is_refused(run, capsys):
    # On Linux, argv bytes that are not UTF-8 arrive as lone surrogates (PEP 383).
    err = refused(capsys, run, "QUERY", query_text=os.fsdecode(b"caf\xe9 au lait"))
    assert "not UTF-8 (byte 0xe9 at character 3)" in err


@pytest.mark.parametrize("ids", [np.full(N, -1), np.arange(N) + N], ids=["all -1", "all past the run"])
def test_an_index_whose_ids_are_all_invalid_falls_back_to_exact_search(run, capsys, monkeypatch, ids):
    monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 1)
    faiss_file = write_index(run, ids=ids)
    status, out, err = search(capsys, str(run), "a question", "--top-k", "3", "--json")
    assert status == 0, err
    assert err.startswith(f"docbeam search: {faiss_file} names no chunk of the run;") and err.count("\n") == 1
    data = json.loads(out)
    best = np.argsort(-(normalised(VECTORS) @ QUERY_VECTOR[0]), kind="stable")[:3]
    assert data["method"] == "exact" and [h["doc_id"] for h in data["hits"]] == [f"chunk-{i}" for i in best]


def test_an_intact_index_is_still_used(run, capsys, monkeypatch):
    monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 1)
    write_index(run)
    status, out, err = search(capsys, str(run), "a question", "--top-k", "3", "--json")
    assert status == 0 and not err and json.loads(out)["method"] == "index"


def test_a_gcs_run_passes_the_checks(run, gcs_emulator):
    """gs:// objects are neither links nor special files: the same answer as the local copy,
    exact and through the index, and the manifest's bound holds over ranged reads."""
    write_index(run)
    bucket = gcs_emulator.create_bucket()
    gcs_emulator.upload_dir(run, f"gs://{bucket}/run")
    local, remote = open_run(str(run)), open_run(f"gs://{bucket}/run")
    for use_index in (False, True):
        assert search_vectors(remote, QUERY_VECTOR, 5, use_index) == search_vectors(local, QUERY_VECTOR, 5, use_index)
    gcs_emulator.upload_bytes(f"gs://{bucket}/big/_manifest.json", b'{"model": {"dim": 4}}' + b" " * (16 << 20))
    with pytest.raises(RunError, match="_manifest.json: larger than 16 MiB"):
        open_run(f"gs://{bucket}/big")


@pytest.mark.parametrize("how", ["deleted", "emptied", "fifo"])
def test_chunks_gone_while_the_manifest_records_some_is_refused(run, capsys, how):
    """A run whose chunks/ is gone, empty or a FIFO was answered 'the run has no chunks', exit 0."""
    manifest = json.loads((run / "_manifest.json").read_text())
    (run / "_manifest.json").write_text(json.dumps({**manifest, "counts": {"chunks": len(VECTORS)}}))
    shutil.rmtree(run / "chunks")
    if how == "emptied":
        (run / "chunks").mkdir()
    elif how == "fifo":
        os.mkfifo(run / "chunks")
    err = refused(capsys, run, str(run / "chunks"))
    assert f"holds no chunks, but _manifest.json records {len(VECTORS):,}" in err
