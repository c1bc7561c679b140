"""Default labels on real documents of a Debian machine (tests/extractors/data/real/: licences,
man pages English and translated, HTML manuals, READMEs, changelogs; labelled before docbeam
ran on them), through the real pipeline with the default settings."""

import json
from pathlib import Path

import pytest

from tests.helpers import run_job, table

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parent / "data" / "real"


def test_the_default_labels_get_real_documents_right(tmp_path):
    gold = [json.loads(line) for line in (DATA / "labels.jsonl").read_text().splitlines()]
    run_job([str(DATA / g["file"]) for g in gold], tmp_path / "out", "--extract", "labels")
    name = {r["doc_id"]: Path(r["source"]).name for r in table(tmp_path / "out", "documents").to_pylist()}
    got = {name[r["doc_id"]]: r["value"] for r in table(tmp_path / "out", "extractions").to_pylist()}
    right = {g["file"]: got.get(g["file"]) == g["label"] for g in gold}
    wrong = {g["file"]: (g["label"], got.get(g["file"])) for g in gold if not right[g["file"]]}
    # measured 0.784 (58 of 74; 41 with the descriptions' mean as the label): python -m tests.benchmarks.real_labels
    assert sum(right.values()) / len(gold) >= 0.75, wrong
    tech = [g["file"] for g in gold if g["label"] == "technical documentation"]
    assert sum(right[f] for f in tech) / len(tech) >= 0.8, wrong  # 0.84; was 0.41
    # a licence is a legal text; a manual about accounts and permissions is not (chmod, passwd were)
    legal = {g["file"] for g in gold if g["label"] == "legal contract"}
    assert {f for f, label in got.items() if label == "legal contract"} == legal, wrong
