"""Extractions through the real pipeline: one encoder pass, spans right, costs metered."""

import json

import pyarrow.parquet as pq
import pytest

from pipeline.core.flags import UsageError
from tests.helpers import SAMPLES, run_job, table

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def extracted(tmp_path_factory):
    out = tmp_path_factory.mktemp("extract")
    res = run_job(SAMPLES / "*", out, "--extract", "keyphrases,summary,labels,entities")
    return out, res


def _texts() -> dict[str, str]:
    t = pq.read_table(SAMPLES / "business.parquet").to_pylist()
    return {r["id"]: r["text"] for r in t}


def test_spans_point_at_the_right_characters(extracted):
    out, _ = extracted
    texts = _texts()
    rows = [r for r in table(out, "extractions").to_pylist() if r["doc_id"] in texts]
    assert {r["kind"] for r in rows} >= {"keyphrase", "summary", "label", "entity:email", "entity:money", "entity:date"}
    for r in rows:
        text = texts[r["doc_id"]]
        if r["kind"] == "label":
            assert r["start_char"] is None and r["end_char"] is None
        elif r["kind"] == "keyphrase":  # first occurrence; words may skip stop words between them
            span = text[r["start_char"] : r["end_char"]].lower()
            words = r["value"].split()
            assert span.startswith(words[0]) and span.endswith(words[-1])
        else:
            assert text[r["start_char"] : r["end_char"]] == r["value"], r


def test_labels_are_sensible(extracted):
    out, _ = extracted
    best = {}
    for r in table(out, "extractions").to_pylist():
        if r["kind"] == "label" and (r["doc_id"] not in best or r["score"] > best[r["doc_id"]][1]):
            best[r["doc_id"]] = (r["value"], r["score"])
    assert best["invoice-1042"][0] == "invoice"
    assert best["recipe"][0] == "recipe"
    assert best["support-ticket"][0] == "support request"
    assert best["release-notes"][0] == "release notes"


def test_scores_are_ordered_and_summaries_in_document_order(extracted):
    out, _ = extracted
    rows = table(out, "extractions").to_pylist()
    by_doc = {}
    for r in rows:
        by_doc.setdefault((r["doc_id"], r["kind"]), []).append(r)
    for (_doc, kind), rs in by_doc.items():
        if kind == "keyphrase":
            assert [r["score"] for r in rs] == sorted((r["score"] for r in rs), reverse=True)
            assert len(rs) <= 5
        if kind == "summary":
            assert [r["start_char"] for r in rs] == sorted(r["start_char"] for r in rs) and len(rs) <= 3


def test_one_encoder_pass_and_extractors_metered(extracted):
    _, res = extracted
    stages = res.stage_totals
    for name in ("keyphrases", "summary", "labels", "entities"):
        assert f"extract_{name}" in stages and stages[f"extract_{name}"]["elements_in"] == res.manifest["counts"]["ok"]
    # Every segment (chunks, candidates, label descriptions) went through the one encoder
    # stage once; label descriptions once per run, not once per document.
    from pipeline.extractors.labels import load_labels

    n_descriptions = sum(1 + len(v) for v in load_labels(None).values())  # name + descriptions
    assert stages["encode"]["elements_in"] == stages["chunk"]["elements_out"] + n_descriptions
    assert res.manifest["counts"]["extractions"] == table(res.manifest["options"]["output"], "extractions").num_rows


@pytest.mark.parametrize("body", ["{broken", "{}"])
def test_bad_label_file_fails_before_the_job(tmp_path, body):
    bad = tmp_path / "labels.json"
    bad.write_text(body)
    with pytest.raises(UsageError, match="labels.json"):
        run_job(SAMPLES / "notes.txt", tmp_path / "out", "--extract", "labels", "--label-file", str(bad))
    assert not (tmp_path / "out").exists()


def test_labels_flag_points_to_label_file(tmp_path):
    with pytest.raises(UsageError, match="--label-file"):
        run_job(SAMPLES / "notes.txt", tmp_path / "out", "--extract", "labels", "--labels", "mine.yaml")


def test_manifest_records_extractors(extracted):
    out, _ = extracted
    m = json.loads((out / "_manifest.json").read_text())
    assert m["options"]["extract"] == "keyphrases,summary,labels,entities"
