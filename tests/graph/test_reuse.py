"""`--reuse`: a rerun over a corpus with 5% changed, 5% added and 5% deleted equals a fresh run
of the new corpus, while the encoder sees only the new and changed documents."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from docbeam.pipeline.io import outputs
from docbeam.pipeline.launch.after_run import manifest
from tests.corpus import build_corpus
from tests.helpers import REPO, run_job, write_jsonl
from tests.reference import cosine

pytestmark = pytest.mark.slow


def corpora() -> tuple[list[dict], list[dict], dict]:
    """60 documents, then the same corpus with 3 changed, 3 added and 3 deleted."""
    before = build_corpus(60, seed=21, min_words=20, max_words=450)
    after = [dict(d) for d in before[3:]]  # doc-00000..02 deleted
    for d in after[:3]:
        d["text"] += " A sentence added since the first run."
    after += [{"id": f"new-{i}", "text": t["text"]} for i, t in enumerate(build_corpus(3, seed=22))]
    changes = {
        "deleted": {d["id"] for d in before[:3]},
        "changed": {d["id"] for d in after[:3]},
        "added": {f"new-{i}" for i in range(3)},
    }
    return before, after, changes


def write(folder, docs: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(3):  # three shards, as a crawl would ship them
        write_jsonl(folder / f"part-{i}.jsonl", docs[i::3])


def rows(out, table: str) -> dict:
    key = (lambda r: r["doc_id"]) if table == "documents" else (lambda r: (r["doc_id"], r["chunk_index"]))
    return {key(r): r for r in outputs.read_table(str(out), table).to_pylist()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("reuse")
    before, after, changes = corpora()
    write(root / "v1", before)
    write(root / "v2", after)
    first = run_job(root / "v1" / "*.jsonl", root / "first")
    again = run_job(root / "v2" / "*.jsonl", root / "again", "--reuse", str(root / "first"))
    fresh = run_job(root / "v2" / "*.jsonl", root / "fresh")
    return root, changes, first, again, fresh


def test_the_rerun_equals_a_fresh_run_of_the_new_corpus(runs):
    root, changes, _, again, fresh = runs
    a, f, old = rows(root / "again", "documents"), rows(root / "fresh", "documents"), rows(root / "first", "documents")
    assert a.keys() == f.keys() and not a.keys() & changes["deleted"]
    encoded = changes["changed"] | changes["added"]
    for doc_id, row in a.items():
        assert {k: v for k, v in row.items() if k != "embedding"} == {
            k: v for k, v in f[doc_id].items() if k != "embedding"
        }
        if doc_id in encoded:  # encoded again: a fresh run's vector, up to packing neighbours
            assert cosine(row["embedding"], f[doc_id]["embedding"])[0] >= 1 - 1e-6
        else:  # reused: the previous run's vector, bit for bit
            assert np.array_equal(
                np.asarray(row["embedding"], np.float32), np.asarray(old[doc_id]["embedding"], np.float32)
            )
    ca, cf = rows(root / "again", "chunks"), rows(root / "fresh", "chunks")
    assert ca.keys() == cf.keys()
    assert all(ca[k]["text"] == cf[k]["text"] and ca[k]["start_char"] == cf[k]["start_char"] for k in ca)
    assert again.manifest["accounting"]["holds"] and again.manifest["counts"] == fresh.manifest["counts"]


def test_the_encoder_sees_only_new_and_changed_documents(runs):
    root, changes, _, again, _ = runs
    encoded = changes["changed"] | changes["added"]
    fresh_chunks = rows(root / "fresh", "chunks")
    expected = sum(c["n_tokens"] for (doc_id, _), c in fresh_chunks.items() if doc_id in encoded)
    assert again.stage_totals["encode"]["tokens"] == expected
    r = again.manifest["reuse"]
    assert (r["documents_reused"], r["documents_encoded"], r["documents_removed"]) == (54, 6, 3)
    assert r["same_settings"] is True


def test_removed_documents_are_listed_and_the_report_counts_the_savings(runs):
    root, changes, *_ = runs
    assert set(manifest.read_removed(str(root / "again"))) == changes["deleted"]
    report = json.loads((root / "again" / "_cost" / "report.json").read_text())
    assert report["reuse"]["documents_reused"] == 54 and report["reuse"]["saved_usd_estimate"] > 0
    assert "Reused from the previous run" in (root / "again" / "_cost" / "report.md").read_text()


def test_other_settings_are_not_silently_reused(runs, tmp_path, caplog):
    root, *_ = runs
    res = run_job(root / "v2" / "*.jsonl", tmp_path / "out", "--reuse", str(root / "first"), "--stride", "16")
    assert res.manifest["reuse"]["documents_reused"] == 0 and res.manifest["reuse"]["same_settings"] is False
    assert "settings changed (stride (32 -> 16)): every document is encoded again" in caplog.text


def test_a_run_interrupted_during_reuse_resumes_to_the_same_outputs(runs, tmp_path):
    root, *_ = runs
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "docbeam.pipeline.run", "--input", str(root / "v2" / "*.jsonl"), "--output", str(out)]
    cmd += ["--reuse", str(root / "first"), "--wave-files", "1"]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 300
    while time.time() < deadline and len(list((out / "_progress").glob("*.json"))) < 1:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # mid-run: the second wave is under way
    proc.wait()
    res = run_job(root / "v2" / "*.jsonl", out, "--reuse", str(root / "first"), "--wave-files", "1", "--resume")
    assert res.manifest["accounting"]["holds"]
    assert rows(out, "documents").keys() == rows(root / "fresh", "documents").keys()
    assert set(manifest.read_removed(str(out))) == runs[1]["deleted"]


def test_reuse_through_gcs(gcs_emulator, runs):
    root, changes, *_ = runs
    bucket = gcs_emulator.create_bucket()
    gcs_emulator.upload_dir(root / "v1", f"gs://{bucket}/v1")
    gcs_emulator.upload_dir(root / "v2", f"gs://{bucket}/v2")
    run_job(f"gs://{bucket}/v1/*.jsonl", f"gs://{bucket}/first")
    res = run_job(f"gs://{bucket}/v2/*.jsonl", f"gs://{bucket}/again", "--reuse", f"gs://{bucket}/first")
    assert res.manifest["reuse"]["documents_reused"] == 54 and res.manifest["accounting"]["holds"]
    assert set(manifest.read_removed(f"gs://{bucket}/again")) == changes["deleted"]
