"""`--sink` end to end: a docbeam run into Milvus Lite, then a `--reuse` run with a changed, a
shortened and a removed document leaves the store equal to the Parquet output; bad sink URIs
are one line and exit 2; no secret of a sink URI reaches the manifest, _job.json or the logs."""

import json
import logging
import subprocess
import sys

import numpy as np
import pytest

from docbeam.pipeline import run as run_module
from docbeam.pipeline.core.sink_uri import parse
from docbeam.pipeline.launch.display.console import exit_status, summary
from docbeam.pipeline.stores import query_store, store_for
from docbeam.pipeline.stores.base import chunk_id
from tests.corpus import build_corpus
from tests.helpers import run_job, table, write_jsonl
from tests.support.store_dump import dump

pytestmark = pytest.mark.slow


def store_equals_parquet(uri: str, out) -> None:
    rows = table(out, "chunks").to_pylist()
    meta = {r["doc_id"]: r["metadata"] for r in table(out, "documents", ["doc_id", "metadata"]).to_pylist()}
    held = dump(store_for(parse(uri)))
    assert set(held) == {chunk_id(r["doc_id"], r["chunk_index"]) for r in rows}
    for r in rows:
        h = held[chunk_id(r["doc_id"], r["chunk_index"])]
        assert (h["doc_id"], h["chunk_index"], h["text"], h["section"], h["page_start"]) == (
            r["doc_id"],
            r["chunk_index"],
            r["text"],
            r["section"],
            r["page_start"],
        )
        assert h["metadata"] == (json.loads(meta[r["doc_id"]]) if meta[r["doc_id"]] else None)
        np.testing.assert_allclose(h["embedding"], r["embedding"], atol=1e-6)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("sinks")
    docs = build_corpus(10, seed=31, min_words=150, max_words=420)
    for i, d in enumerate(docs):
        d["topic"] = f"t{i % 3}"  # the document's metadata
    write_jsonl(root / "v1.jsonl", docs)
    after = [dict(d) for d in docs[1:]]  # doc-00000 removed
    after[0]["text"] = " ".join(after[0]["text"].split()[:40])  # doc-00001: fewer chunks now
    after[1]["text"] += " A sentence added since the first run."  # doc-00002 changed
    (root / "v2").mkdir()
    write_jsonl(root / "v2" / "v2.jsonl", after)
    milvus, qdrant = f"milvus://{root}/store.db", f"qdrant://{root}/qdrant"
    sinks = ["--sink", milvus, "--sink", qdrant]
    first = run_job(root / "v1.jsonl", root / "first", *sinks)
    held = {uri: dump(store_for(parse(uri))) for uri in (milvus, qdrant)}
    # a store named for the first time in the --reuse run: it gets every chunk, reused or not
    fresh = ["--sink", f"milvus://{root}/named-later.db"]
    second = run_job(root / "v2" / "v2.jsonl", root / "second", "--reuse", str(root / "first"), *sinks, *fresh)
    return root, (milvus, qdrant), first, held, second


STORES = pytest.mark.parametrize("store", [0, 1], ids=["milvus", "qdrant"])


@STORES
def test_a_run_fills_the_store_with_its_chunks(runs, store):
    root, uris, first, held_by_uri, _ = runs
    uri, held = uris[store], held_by_uri[uris[store]]
    assert len(held) == first.manifest["counts"]["chunks"] > 10  # several documents span windows
    sink = first.manifest["sinks"][store]
    assert sink == {**sink, "uri": uri, "chunks": len(held), "written": len(held), "deleted": 0, "holds": True}
    assert exit_status(first)[0] == 0
    assert f"sink:      {uri}: {len(held):,} of {len(held):,} chunks written" in summary(first)
    stage = {s["stage"]: s for s in first.cost["stages"]}["sink"]
    assert stage["elements_in"] == 2 * len(held) and stage["wall_s"] > 0  # both stores


@STORES
def test_a_reuse_run_leaves_the_store_equal_to_its_parquet(runs, store):
    root, uris, first, held, second = runs
    uri = uris[store]
    assert second.manifest["reuse"]["documents_reused"] == 7 and second.manifest["reuse"]["documents_removed"] == 1
    before = {r["doc_id"]: 0 for r in table(root / "first", "chunks", ["doc_id"]).to_pylist()}
    for r in table(root / "first", "chunks", ["doc_id"]).to_pylist():
        before[r["doc_id"]] += 1
    now = {r["doc_id"]: 0 for r in table(root / "second", "chunks", ["doc_id"]).to_pylist()}
    for r in table(root / "second", "chunks", ["doc_id"]).to_pylist():
        now[r["doc_id"]] += 1
    assert now["doc-00001"] < before["doc-00001"]
    sink = second.manifest["sinks"][store]
    assert sink["holds"] and sink["deleted"] == before["doc-00000"] + before["doc-00001"] - now["doc-00001"]
    store_equals_parquet(uri, root / "second")


@STORES
def test_the_store_answers_as_exact_search_over_the_parquet(runs, store):
    root, uris, *_ = runs
    uri = uris[store]
    rows = table(root / "second", "chunks").to_pylist()
    vecs = np.stack([r["embedding"] for r in rows])
    for q in vecs[[0, 5, 11]] + 0.05:  # near a stored chunk, not on it
        q = q / np.linalg.norm(q)
        top = np.argsort(-(vecs @ q))[:5]
        hits = query_store(uri, q, top_k=5)
        assert [h["chunk_id"] for h in hits] == [chunk_id(rows[i]["doc_id"], rows[i]["chunk_index"]) for i in top]
        assert [h["text"] for h in hits] == [rows[i]["text"] for i in top]


@pytest.mark.parametrize(
    "uri, says",
    [
        ("mlivus:///tmp/x.db", "a sink URI is one of milvus://"),
        ("/tmp/x.db", "'/tmp/x.db': a sink URI is one of"),
        ("qdrant:tmp/q", "(a local store: milvus:///absolute/path.db or qdrant:///absolute/folder)"),
        ("milvus:/tmp/x.db", "a sink URI is one of"),
        ("milvus://tmp/x.db", "(a local file is milvus:///tmp/x.db: three slashes)"),
        ("milvus:///tmp/x.sqlite", "needs a file name ending in .db"),
        ("bigquery://only.two", "expected bigquery://PROJECT.DATASET.TABLE"),
        ("milvus://bob:hunter2@localhost:99999/c", "the port is not a number"),
        ("qdrant://bob:hunter2@localhost:6333/c", "Qdrant takes no user:password@"),  # never sent: refused
    ],
)
def test_a_bad_sink_uri_is_one_line_and_exit_2(tmp_path, capsys, uri, says):
    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": "hello"}\n')
    status = run_module.main(["--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "o"), "--sink", uri])
    err = capsys.readouterr().err
    assert status == 2 and "--sink" in err and says in err and len(err.strip().splitlines()) == 1
    assert "hunter2" not in err


def test_an_unreachable_store_refuses_the_run_without_showing_its_secrets(tmp_path, capsys, caplog):
    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": "hello"}\n')
    uri = "milvus://bob:hunter2@127.0.0.1:1/chunks?token=s3cr3t&timeout=1"
    with caplog.at_level(logging.DEBUG):
        status = run_module.main(
            ["--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "o"), "--sink", uri]
        )
    err = capsys.readouterr().err
    assert status == 2 and "--sink milvus://bob:***@127.0.0.1:1/chunks?token=***&timeout=1" in err
    for text in (err, caplog.text, *[p.read_text() for p in tmp_path.rglob("*.json")]):
        assert "hunter2" not in text and "s3cr3t" not in text


def test_a_store_named_first_in_a_reuse_run_gets_every_chunk(runs):
    root, *_ = runs
    store_equals_parquet(f"milvus://{root}/named-later.db", root / "second")


@STORES
def test_docbeam_search_sink_lists_what_searching_the_parquet_lists(runs, store, capsys):
    from docbeam.pipeline import cli

    root, uris, *_ = runs
    answers = {}
    for where in ([], ["--sink", uris[store]]):
        assert (
            cli.main(["search", str(root / "second"), "how do the documents begin?", "--top-k", "5", "--json", *where])
            == 0
        )
        answers[bool(where)] = json.loads(capsys.readouterr().out)
    parquet, sink = answers[False], answers[True]
    assert sink["method"] == f"store {uris[store]}" and parquet["method"] == "exact"
    pick = ("doc_id", "chunk_index", "section", "text")
    assert [[h[k] for k in pick] for h in sink["hits"]] == [[h[k] for k in pick] for h in parquet["hits"]]
    np.testing.assert_allclose([h["score"] for h in sink["hits"]], [h["score"] for h in parquet["hits"]], atol=1e-5)
    assert cli.main(["search", str(root / "second"), "q", "--sink", f"milvus://{root}/absent.db"]) == 2
    assert "no store at" in capsys.readouterr().err
    unreachable = "milvus://127.0.0.1:1/coll?timeout=1"  # a server store nobody serves
    assert cli.main(["search", str(root / "second"), "q", "--sink", unreachable]) == 2
    err = capsys.readouterr().err
    assert "--sink: cannot reach milvus://127.0.0.1:1/coll" in err and "Traceback" not in err


def test_a_store_that_echoes_the_key_never_gets_it_printed(tmp_path):
    """Every line the process prints is redacted, Beam's error log lines ("Raw response content")
    and the clients' included, not only docbeam's own (a child process: its real stderr)."""
    from tests.support.echoing_store import echoing_store

    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": "hello"}\n')
    code = (
        "import sys; from docbeam.pipeline.io import storage; "
        "storage.configure_retries(storage.RetryPolicy(max_attempts=1, initial_wait_s=0.01, max_wait_s=0.02)); "
        "from docbeam.pipeline.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    with echoing_store() as port:
        uri = f"qdrant://127.0.0.1:{port}/chunks?api_key=K3Y-0f-the-st0re"
        args = ["run", "--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "o"), "--sink", uri]
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr[-2000:]  # the chunk was not written: the run says so
    assert "your key was ***" in out.stderr  # the server's answer reached the log, redacted
    for text in (out.stdout, out.stderr, *[p.read_text() for p in tmp_path.rglob("*.json*")]):
        assert "K3Y-0f-the-st0re" not in text


def test_overwrite_with_a_smaller_corpus_leaves_the_store_equal_to_the_new_run(runs, tmp_path):
    """--overwrite replaces a run: the store drops the chunks of the documents the new run lacks
    (kept as removed/doc_ids.replaced.jsonl before the old files go), not only Parquet."""
    root, *_ = runs
    uri = f"qdrant://{tmp_path}/qdrant"
    run_job(root / "v1.jsonl", tmp_path / "out", "--sink", uri)
    smaller = write_jsonl(tmp_path / "smaller.jsonl", build_corpus(10, seed=31, min_words=150, max_words=420)[:4])
    res = run_job(smaller, tmp_path / "out", "--overwrite", "--sink", uri)
    assert res.manifest["sinks"][0]["deleted"] > 0 and res.manifest["sinks"][0]["holds"]
    store_equals_parquet(uri, tmp_path / "out")


def test_a_milvus_lite_file_that_is_no_database_is_one_line_without_a_traceback(tmp_path):
    (tmp_path / "in.jsonl").write_text('{"id": "a", "text": "hello"}\n')
    (tmp_path / "store.db").write_text("not a Milvus Lite folder")
    args = ["run", "--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "o")]
    code = "import sys; from docbeam.pipeline.cli import main; sys.exit(main(sys.argv[1:]))"
    uri = f"milvus://{tmp_path}/store.db"
    out = subprocess.run(
        [sys.executable, "-c", code, *args, "--sink", uri], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert f"docbeam run: --sink {uri}: {tmp_path}/store.db is a file: Milvus Lite keeps" in out.stderr
