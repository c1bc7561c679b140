"""The two fingerprints (README, "Incremental runs"): what the vectors depend on and what the
extractions depend on. `--reuse` with only extractors changed copies the vectors and runs just
those extractors (one that needs the encoder on its own candidates alone); `--resume` refuses a
run made with other settings; what the log says, the manifest records and the cost report
prices agree."""

import logging
import os
import subprocess
import sys

import pytest

from docbeam.pipeline.launch.after_run import manifest
from docbeam.pipeline.launch.display import console
from tests.corpus import build_corpus
from tests.helpers import REPO, run_job, table, write_jsonl

pytestmark = pytest.mark.slow

ALL_FOUR = "keyphrases,summary,labels,entities"
GONE = "gone\nwith a newline\r\u2028and more"  # an id that would split any line-based list


def corpus() -> list[dict]:
    docs = build_corpus(8, seed=5, min_words=30, max_words=160)
    for i, d in enumerate(docs[:4]):  # entities to find: an email, a URL, a date
        d["text"] += f" Write to team{i}@example.org or see https://example.org/{i} before 2024-03-0{i + 1}."
    return docs


def entity_rows(out) -> set:
    rows = table(out, "extractions").to_pylist()
    return {(r["doc_id"], r["kind"], r["value"], r["start_char"]) for r in rows if r["kind"].startswith("entity:")}


def kinds(out) -> set[str]:
    return {k.split(":")[0] for k in table(out, "extractions", ["kind"]).column("kind").to_pylist()}


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("fingerprints")
    docs = corpus()
    write_jsonl(root / "v1.jsonl", [*docs, {"id": GONE, "text": "A document deleted since the first run."}])
    (root / "v2").mkdir()
    write_jsonl(root / "v2" / "docs.jsonl", docs)
    return root, len(docs)


def test_all_four_extractors_rerun_is_reused_and_the_log_and_manifest_agree(corpora, tmp_path, caplog):
    root, n = corpora
    run_job(root / "v2" / "docs.jsonl", tmp_path / "first", "--extract", ALL_FOUR)
    caplog.clear()
    res = run_job(
        root / "v2" / "docs.jsonl", tmp_path / "again", "--extract", ALL_FOUR, "--reuse", str(tmp_path / "first")
    )
    r = res.manifest["reuse"]
    assert (r["same_settings"], r["vectors_reused"], r["documents_reused"], r["documents_encoded"]) == (
        True,
        True,
        n,
        0,
    )
    assert "settings changed" not in caplog.text and "extractor settings changed" not in caplog.text


@pytest.fixture(scope="module")
def chain(corpora, tmp_path_factory):
    """first: keyphrases over v1; then over v2: +entities reusing first, only entities reusing
    that, and a fresh run with keyphrases and entities."""
    root, _ = corpora
    out = tmp_path_factory.mktemp("chain")
    v2 = root / "v2" / "docs.jsonl"
    first = run_job(root / "v1.jsonl", out / "first", "--extract", "keyphrases")
    added = run_job(v2, out / "added", "--extract", "keyphrases,entities", "--reuse", str(out / "first"))
    dropped = run_job(v2, out / "dropped", "--extract", "entities", "--reuse", str(out / "added"))
    fresh = run_job(v2, out / "fresh", "--extract", "keyphrases,entities")
    return out, first, added, dropped, fresh


def test_adding_a_text_only_extractor_reuses_the_vectors_and_runs_only_it(corpora, chain):
    _, n = corpora
    out, _, added, _, _ = chain
    r = added.manifest["reuse"]
    assert (r["documents_reused"], r["documents_encoded"], r["vectors_reused"]) == (n, 0, True)
    assert r["same_settings"] is False and r["extractors_run_on_reused"] == ["entities"]
    assert added.stage_totals.get("encode", {}).get("tokens", 0) == 0  # the encoder ran nothing
    assert entity_rows(out / "added") == entity_rows(out / "fresh") and entity_rows(out / "fresh")
    keyphrases = {(r["doc_id"], r["value"]) for r in table(out / "added", "extractions").to_pylist()}
    assert keyphrases == {(r["doc_id"], r["value"]) for r in table(out / "fresh", "extractions").to_pylist()}
    assert added.manifest["accounting"]["holds"]


def test_a_reused_run_carries_its_own_fingerprints_and_drops_an_extractor_no_longer_run(corpora, chain):
    _, n = corpora
    out, _, added, dropped, fresh = chain

    def fingerprints(o) -> dict:
        return {r["doc_id"]: r["fingerprint"] for r in table(o, "documents", ["doc_id", "fingerprint"]).to_pylist()}

    assert fingerprints(out / "added") == fingerprints(out / "fresh")  # a later --reuse compares these
    r = dropped.manifest["reuse"]
    assert (r["documents_reused"], r["documents_encoded"], r["vectors_reused"]) == (n, 0, True)
    assert kinds(out / "dropped") == {"entity"}  # keyphrases not run: their rows not copied
    assert entity_rows(out / "dropped") == entity_rows(out / "fresh")


def extraction_rows(out) -> dict:
    rows = table(out, "extractions").to_pylist()
    return {(r["doc_id"], r["kind"], r["value"], r["start_char"], r["end_char"]): r["score"] for r in rows}


def chunk_vectors(out) -> dict:
    rows = table(out, "chunks", ["doc_id", "chunk_index", "embedding"]).to_pylist()
    return {(r["doc_id"], r["chunk_index"]): r["embedding"] for r in rows}


def same_rows(a: dict, b: dict) -> bool:
    """The same rows; scores to float32 rounding (candidates packed in other batches)."""
    return a.keys() == b.keys() and all(abs(a[k] - b[k]) < 1e-5 for k in a)


@pytest.fixture(scope="module")
def changed(corpora, tmp_path_factory):
    """All four; then again reusing that with --summary-sentences 2, --keyphrase-top-n 3 and
    --label-top-k 2 (labels rank the run-wide description vectors); and a fresh run with those
    settings."""
    root, _ = corpora
    out = tmp_path_factory.mktemp("changed")
    v2 = root / "v2" / "docs.jsonl"
    extract = ["--extract", ALL_FOUR]
    settings = ["--summary-sentences", "2", "--keyphrase-top-n", "3", "--label-top-k", "2"]
    first = run_job(v2, out / "first", *extract)
    again = run_job(v2, out / "again", *extract, *settings, "--reuse", str(out / "first"))
    fresh = run_job(v2, out / "fresh", *extract, *settings)
    return out, first, again, fresh


def test_an_encoder_extractor_setting_changed_encodes_its_candidates_alone(corpora, changed):
    _, n = corpora
    out, _, again, fresh = changed
    r = again.manifest["reuse"]
    assert (r["documents_reused"], r["documents_encoded"], r["vectors_reused"]) == (n, 0, True)
    assert sorted(r["extractors_run_on_reused"]) == ["keyphrases", "labels", "summary"]
    assert chunk_vectors(out / "again") == chunk_vectors(out / "first")  # copied, not encoded again
    # The encoder ran exactly what a fresh run encodes besides its windows: the candidates and the
    # label descriptions.
    windows = sum(table(out / "fresh", "chunks", ["n_tokens"]).column("n_tokens").to_pylist())
    candidates = fresh.stage_totals["encode"]["tokens"] - windows
    assert candidates > 0 and again.stage_totals["encode"]["tokens"] == candidates
    assert same_rows(extraction_rows(out / "again"), extraction_rows(out / "fresh"))
    kinds = [k[1] for k in extraction_rows(out / "again")]
    assert {"summary", "keyphrase", "entity:email"} <= set(kinds) and kinds.count("label") > n  # top-k 2
    assert again.manifest["accounting"]["holds"]


def test_adding_an_encoder_extractor_reuses_the_vectors_and_says_so(corpora, chain, tmp_path, caplog):
    root, n = corpora
    out, *_ = chain
    v2 = root / "v2" / "docs.jsonl"
    caplog.set_level(logging.INFO, logger="docbeam")
    res = run_job(v2, tmp_path / "o", "--extract", "keyphrases,summary", "--reuse", str(out / "first"))
    r = res.manifest["reuse"]
    assert (r["documents_reused"], r["documents_encoded"], r["vectors_reused"]) == (n, 0, True)
    assert "summary (its candidates encoded)" in caplog.text and "encoded again" not in caplog.text
    fresh = run_job(v2, tmp_path / "fresh", "--extract", "keyphrases,summary")
    assert same_rows(extraction_rows(tmp_path / "o"), extraction_rows(tmp_path / "fresh"))
    assert res.stage_totals["encode"]["tokens"] < fresh.stage_totals["encode"]["tokens"]


def test_removed_ids_survive_any_character(chain):
    out, *_ = chain
    assert manifest.read_removed(str(out / "added")) == [GONE]
    assert len((out / "added" / "removed" / "doc_ids.jsonl").read_text().split("\n")) == 2  # one line, then ""


def test_the_saving_is_priced_at_the_encode_stage_and_the_summary_says_reuse(corpora, chain):
    _, n = corpora
    out, first, _, _, fresh = chain
    # Half the corpus changed: the saving is the encode stage's price of the other half, which
    # cannot exceed what a whole fresh run of it cost.
    docs = corpus()
    for d in docs[::2]:
        d["text"] += " Changed since."
    write_jsonl(out / "half.jsonl", docs)
    res = run_job(out / "half.jsonl", out / "half", "--extract", "keyphrases,entities", "--reuse", str(out / "fresh"))
    saving = res.cost["reuse"]["saved_usd_estimate"]
    assert res.cost["reuse"]["documents_reused"] == n // 2
    assert 0 < saving < fresh.cost["totals"]["cost_usd"] / 2
    assert "the encode stage's own cost" in (out / "half" / "_cost" / "report.md").read_text()
    text = console.summary(res)
    assert f"{n // 2} documents reused" in text and f"{n // 2} encoded" in text
    encoded = res.cost["reuse"]["document_tokens_encoded"]
    assert f"{encoded / max(res.wall_seconds, 1e-9):,.0f} encoded document tokens/s" in text


def _docbeam(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docbeam.pipeline.run", *args],
        cwd=REPO,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_resume_over_a_run_made_with_other_settings_is_refused(corpora, tmp_path):
    root, _ = corpora
    out = tmp_path / "out"
    base = ["--input", str(root / "v2" / "docs.jsonl"), "--output", str(out), "--wave-files", "1"]
    run_job(root / "v2" / "docs.jsonl", out, "--wave-files", "1", "--max-seq-len", "128")
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    cases = (
        (["--max-seq-len", "64"], "max_seq_len (128 -> 64)"),
        (["--max-seq-len", "128", "--extract", "entities"], "extractors.entities"),
    )
    for extra, named in cases:
        done = _docbeam(*base, "--resume", *extra)
        assert done.returncode == 2, done.stderr[-2000:]
        assert named in done.stderr and "other settings" in done.stderr
        assert sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file()) == files  # nothing deleted
    again = _docbeam(*base, "--max-seq-len", "128", "--resume")
    assert again.returncode == 0, again.stderr[-2000:]
