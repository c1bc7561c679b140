"""Bad input, duplicates, crashes and reruns: finish, lose nothing, duplicate nothing."""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline.io import outputs
from tests.corpus import build_corpus
from tests.helpers import REPO, SAMPLES, rss_growth, run_job, table, write_jsonl

pytestmark = pytest.mark.slow


def good(prefix: str, n: int, seed: int) -> list[dict]:
    return [{"id": f"{prefix}-{i}", "text": d["text"]} for i, d in enumerate(build_corpus(n, seed, 10, 60))]


def hostile_corpus(root: Path) -> dict[str, list[str]]:
    """Write hostile files (each mixed with good records); return expected good ids and errors."""
    root.mkdir()
    expect_ids, expect_errors = [], []

    rows = good("gz", 30, 1)
    blob = gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode())
    (root / "truncated.jsonl.gz").write_bytes(blob[: int(len(blob) * 0.6)])
    expect_errors.append("truncated_gzip")  # the rows before the break are checked below

    (root / "bomb.jsonl.gz").write_bytes(gzip.compress(b"0" * (64 << 20)))
    expect_errors.append("decompressed_too_large")

    mixed = good("mixed", 6, 2)
    lines = [json.dumps(r).encode() for r in mixed]
    lines.insert(1, b'{"id": "bad-utf8", "text": "caf\xe9"}')
    lines.insert(3, b"[1, 2, 3]")
    lines.insert(4, b'"just a string"')
    lines.insert(5, b'{"id": "no-text"}')
    lines.insert(6, b'{"id": "num-text", "text": 12}')
    lines.insert(7, b'{"id": "half", "text": "unterminated')
    (root / "mixed.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    expect_ids += [r["id"] for r in mixed]
    expect_errors += [
        "invalid_utf8",
        "not_an_object",
        "not_an_object",
        "missing_text",
        "text_not_string",
        "invalid_json",
    ]

    (root / "empty.jsonl").write_bytes(b"")
    expect_errors.append("empty_file")
    (root / "junk.txt").write_bytes(bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8)))
    expect_errors.append("junk")  # binary_content or invalid_utf8, whichever the bytes hit first

    (root / "nested.html").write_text("<div>" * 20000 + "deeply nested but readable text" + "</div>" * 20000)
    expect_ids.append("nested.html")  # ids are relative to the input's root

    pq.write_table(pa.table({"id": ["p1"], "body": ["no text column"]}), root / "wrong.parquet")
    expect_errors.append("wrong_schema")

    dupes_a, dupes_b = good("dup", 3, 3), good("dup", 3, 4)  # same ids, different texts
    write_jsonl(root / "dupes-a.jsonl", dupes_a)
    write_jsonl(root / "dupes-b.jsonl", dupes_b)
    expect_ids += [r["id"] for r in dupes_a]
    expect_errors += ["duplicate_doc_id"] * 3

    # 50 MB in one document: sparse words in whitespace, so it is cheap to encode but every
    # byte is read, tokenised block by block and windowed.
    words = " ".join(f"word{i}" + " " * 10_000 for i in range(5_000))
    (root / "big.txt").write_text(words)
    expect_ids.append("big.txt")
    return {"ids": expect_ids, "errors": expect_errors, "good_gz": [r["id"] for r in rows]}


def test_hostile_corpus_rejects_each_and_keeps_every_good_document(tmp_path):
    expect = hostile_corpus(tmp_path / "in")
    with rss_growth() as grew:
        res = run_job(tmp_path / "in" / "*", tmp_path / "out", "--max-decompressed-bytes", str(16 << 20))
    docs = {d["doc_id"]: d for d in table(tmp_path / "out", "documents").to_pylist()}
    errors = outputs.read_errors(str(tmp_path / "out"))

    assert set(expect["ids"]) <= set(docs)
    kept_gz = [i for i in expect["good_gz"] if i in docs]
    assert 5 <= len(kept_gz) < 30 and kept_gz == expect["good_gz"][: len(kept_gz)]  # rows before the break
    kinds = sorted(e["error"] for e in errors if not e["source"].endswith("junk.txt"))
    assert kinds == sorted(k for k in expect["errors"] if k != "junk")  # each hostile record, exactly once
    junk = [e for e in errors if e["source"].endswith("junk.txt")]
    assert len(junk) == 1 and junk[0]["error"] in ("binary_content", "invalid_utf8")
    for e in errors:
        assert e["source"] and e["message"].startswith(e["source"]) and e["stage"] in ("parse", "chunk", "assemble")
    dup = [e for e in errors if e["error"] == "duplicate_doc_id"]
    assert all(e["source"].endswith("dupes-b.jsonl") and "dupes-a.jsonl row" in e["message"] for e in dup)
    assert all(docs[f"dup-{i}"]["source"].endswith("dupes-a.jsonl") for i in range(3))

    big = docs["big.txt"]
    assert big["n_chars"] > 50_000_000 and big["n_tokens"] > 5_000 and big["n_chunks"] > 20
    big_chunks = [c for c in table(tmp_path / "out", "chunks").to_pylist() if c["doc_id"] == big["doc_id"]]
    assert max(c["end_char"] for c in big_chunks) > 50_000_000  # embedded to the end, not truncated
    assert grew[0] < 2 << 30  # a 50 MB document read and chunked in bounded pieces

    m = res.manifest
    assert m["accounting"]["holds"], m["accounting"]
    assert m["counts"]["read"] == len(docs) + len(errors)


def _rows(out: Path) -> tuple[dict, dict, list]:
    docs = {d["doc_id"]: d for d in table(out, "documents").to_pylist()}
    chunks = {(c["doc_id"], c["chunk_index"]): c for c in table(out, "chunks").to_pylist()}
    errors = sorted(json.dumps(e, sort_keys=True) for e in outputs.read_errors(str(out)))
    return docs, chunks, errors


def _same(a: Path, b: Path, exact: bool) -> None:
    (da, ca, ea), (db, cb, eb) = _rows(a), _rows(b)
    assert da.keys() == db.keys() and ca.keys() == cb.keys() and ea == eb
    for key in da:
        for f in ("source", "n_chars", "n_tokens", "n_chunks", "model", "attention", "metadata"):
            assert da[key][f] == db[key][f]
    for rows_a, rows_b in ((da, db), (ca, cb)):
        for key in rows_a:
            x, y = np.asarray(rows_a[key]["embedding"]), np.asarray(rows_b[key]["embedding"])
            assert np.array_equal(x, y) if exact else np.allclose(x, y, atol=2e-6), key


def test_reruns_are_bit_identical(tmp_path):
    run_job(SAMPLES / "*", tmp_path / "a")
    run_job(SAMPLES / "*", tmp_path / "b")
    _same(tmp_path / "a", tmp_path / "b", exact=True)


def test_multi_processing_gives_the_same_outputs(tmp_path, sample_run):
    out, _ = sample_run
    res = run_job(SAMPLES / "*", tmp_path / "mp", "--direct_running_mode=multi_processing", "--direct_num_workers=2")
    assert res.manifest["accounting"]["holds"]
    # Workers pack different bundles, so rows hold different neighbours: same vectors to
    # float32 rounding, not bit for bit.
    _same(out, tmp_path / "mp", exact=False)


def test_killed_run_resumes_without_loss_or_duplicates(tmp_path, sample_run):
    clean, _ = sample_run
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "docbeam.pipeline.run",
        "--input",
        str(SAMPLES / "*"),
        "--output",
        str(out),
        "--wave-files",
        "1",
    ]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while len(list((out / "_progress").glob("*.json"))) < 2 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # mid-run: the third wave is under way
    proc.wait()
    committed = len(list((out / "_progress").glob("*.json")))
    assert 2 <= committed < 6, "the kill must land mid-run"
    assert not (out / "_manifest.json").exists()

    res = run_job(SAMPLES / "*", out, "--wave-files", "1", "--resume")
    assert res.manifest["accounting"]["holds"]
    assert len(list((out / "_progress").glob("*.json"))) == 6
    _same(clean, out, exact=False)


def test_waves_read_listed_files_by_name_not_as_globs(tmp_path):
    """A file named like a glob pattern ("a[1].jsonl") is read in wave mode, not lost."""
    src = tmp_path / "in"
    src.mkdir()
    write_jsonl(src / "a[1].jsonl", good("bracket", 3, 7))
    write_jsonl(src / "b.jsonl", good("plain", 2, 8))
    res = run_job(src / "*.jsonl", tmp_path / "out", "--wave-files", "1")
    ids = {d["doc_id"] for d in table(tmp_path / "out", "documents").to_pylist()}
    assert ids == {f"bracket-{i}" for i in range(3)} | {f"plain-{i}" for i in range(2)}
    assert res.manifest["accounting"]["holds"] and res.manifest["inputs"]["files_matched"] == 2
    # Two waves, one process: the model is loaded at most once (not at all when an earlier job
    # of this process loaded it), and each batch shape compiled at most once.
    encode = res.stage_totals["encode"]
    assert encode.get("model_loads", 0) <= 1 and encode.get("compilations", 0) <= 1  # both waves: [1, 256]
    again = run_job(src / "*.jsonl", tmp_path / "out", "--wave-files", "1", "--resume")
    assert again.manifest["counts"]["ok"] == 5  # both waves committed: nothing redone, nothing doubled
