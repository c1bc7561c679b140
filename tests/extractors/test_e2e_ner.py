"""--extract entities --ner-model through the real pipeline (Beam's FnApiRunner): entity rows
in extractions/ equal the transformers pipeline on docbeam's windows, for the kept record of
each doc_id only, beside the pattern entities; the branch metered and recorded."""

import json

import pytest

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core.records import Document
from docbeam.pipeline.extractors.values import readable
from docbeam.pipeline.ingest.chunking import Windowing
from docbeam.pipeline.ingest.ner_windows import model_windows
from tests.corpus import varied_texts
from tests.extractors.ner_checkpoints import CONLL, ner_checkpoint
from tests.extractors.ner_reference import Transformers, as_tuples, embedding_chunker, scores
from tests.extractors.test_ner_parity import TOLERANCE, parity_texts
from tests.helpers import run_job, table, write_jsonl

pytestmark = pytest.mark.slow
TYPES = {f"entity:{t}" for t in ("PER", "ORG", "LOC", "MISC")}  # the types of the CoNLL tags
CHUNK = 128  # --max-seq-len: long documents get several chunks, hence several classifier windows


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ner")
    long = [t for t in varied_texts(200, seed=3) if len(t.split()) >= 250][:3]
    records = [{"id": f"short-{i}", "text": t} for i, t in enumerate(parity_texts(12, seed=21))]
    records += [{"id": f"long-{i}", "text": t} for i, t in enumerate(long)]
    records += [
        {"id": "contact", "text": "Write to Marie Curie at marie@example.org before 2 February 2022."},
        {"id": "short-0", "text": "A later record with the same id: Jean-Baptiste Lamarck in Zürich."},  # duplicate
        {"id": "empty"},  # rejected: no text
    ]
    src = write_jsonl(tmp / "docs.jsonl", records)
    out = tmp / "out"
    model = ner_checkpoint("bert")
    res = run_job(src, out, "--extract", "entities", "--ner-model", str(model), "--max-seq-len", str(CHUNK))
    kept = {r["id"]: r["text"] for r in reversed(records) if "text" in r}  # the first record of an id wins
    parsed = [r["text"] for r in records if "text" in r]  # the duplicate is windowed too, then dropped at the join
    return out, res, model, kept, parsed


def test_entities_equal_the_transformers_pipeline_on_the_windows(run):
    out, res, model, kept, parsed = run
    assert res.manifest["accounting"]["holds"]
    assert sorted(res.manifest["counts"]["rejected_by_error"]) == ["duplicate_doc_id", "missing_text"]
    rows = [r for r in table(out, "extractions").to_pylist() if r["kind"] in TYPES]
    got: dict[str, list] = {}
    for r in sorted(rows, key=lambda r: (r["doc_id"], r["start_char"])):
        assert r["value"] == readable(kept[r["doc_id"]][r["start_char"] : r["end_char"]])
        got.setdefault(r["doc_id"], []).append(r)
    tok, special = load_tokenizer(model)
    docs = [Document(uid=doc_id, doc_id=doc_id, source="docs.jsonl", row=0, text=t) for doc_id, t in kept.items()]
    classifier = Windowing(512, 32, specials=special.count)  # its own window; --stride 32
    windows = {d.doc_id: ws for d, ws in model_windows(docs, embedding_chunker(CHUNK), tok, special, classifier)}
    every = [Document(uid=str(i), doc_id=str(i), source="docs.jsonl", row=i, text=t) for i, t in enumerate(parsed)]
    encoded = sum(len(ws) for _, ws in model_windows(every, embedding_chunker(CHUNK), tok, special, classifier))
    assert encoded == res.stage_totals["ner_windows"]["elements_out"]
    assert all(len(windows[f"long-{i}"]) > 1 for i in range(3))
    pipe = Transformers(model)
    for doc_id in kept:
        ref = pipe.windowed([(w, None) for w in windows[doc_id]], "first")
        mine = [
            {"entity_group": r["kind"].split(":")[1], "start": r["start_char"], "end": r["end_char"], **r}
            for r in got.get(doc_id, [])
        ]
        assert as_tuples(mine) == as_tuples(ref), doc_id
        assert max((abs(a - b) for a, b in zip(scores(mine), scores(ref))), default=0) <= TOLERANCE
    assert sum(len(v) for v in got.values()) > 50


def test_patterns_stay_and_the_branch_is_metered_and_recorded(run):
    out, res, model, _, _ = run
    kinds = {r["kind"] for r in table(out, "extractions").to_pylist() if r["doc_id"] == "contact"}
    assert {"entity:email", "entity:date"} <= kinds and kinds & TYPES
    assert table(out, "extractions").schema.field("score").type == "float"
    stages = res.stage_totals
    for stage in ("ner_windows", "ner_pack", "ner_encode", "ner_entities"):
        assert stages[stage]["wall_us"] > 0, stage
    assert stages["ner_encode"]["tokens"] == stages["ner_pack"]["tokens"] > 0
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["ner_model"]["labels"] == list(CONLL) and manifest["ner_model"]["aggregation"] == "first"
    assert manifest["ner_model"]["name"] == str(model) and "ner" in manifest["settings"]["values"]
    assert {r["seq_len"] for r in manifest["attention"]["ner_by_length"]} == {512, 64}  # its window, short rows
