"""The output contract, stated literally: what a reader of docbeam's tables may rely on.

Not derived from the code that writes the tables: a change to a column (name, type,
nullability, the embedding's size) must change this file too, on purpose.
"""

import json

import pyarrow as pa
import pytest

from docbeam.pipeline.io import outputs
from tests.helpers import run_job, table, write_jsonl

pytestmark = pytest.mark.slow

EMBEDDING = pa.list_(pa.float32(), 384)  # all-MiniLM-L6-v2
DOCUMENTS = [
    ("doc_id", pa.string(), True),
    ("source", pa.string(), True),
    ("n_chars", pa.int64(), True),
    ("n_tokens", pa.int64(), True),
    ("n_chunks", pa.int32(), True),
    ("embedding", EMBEDDING, True),
    ("model", pa.string(), True),
    ("attention", pa.string(), True),
    ("metadata", pa.string(), True),
    ("text", pa.string(), True),
    ("format", pa.string(), True),
    ("url", pa.string(), True),
    ("crawl_date", pa.timestamp("ms", tz="UTC"), True),
    ("fingerprint", pa.string(), True),
    ("language", pa.string(), True),
]
CHUNKS = [
    ("doc_id", pa.string(), True),
    ("chunk_index", pa.int32(), True),
    ("start_char", pa.int64(), True),
    ("end_char", pa.int64(), True),
    ("n_tokens", pa.int32(), True),
    ("embedding", EMBEDDING, True),
    ("text", pa.string(), True),
    ("page_start", pa.int32(), True),
    ("page_end", pa.int32(), True),
    ("section", pa.string(), True),
    ("cut_in_word", pa.bool_(), True),
]
EXTRACTIONS = [
    ("doc_id", pa.string(), True),
    ("kind", pa.string(), True),
    ("value", pa.string(), True),
    ("score", pa.float32(), True),
    ("start_char", pa.int64(), True),
    ("end_char", pa.int64(), True),
]
ERROR_KEYS = {"source", "doc_id", "stage", "error", "message", "row"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    src = tmp_path_factory.mktemp("in")
    write_jsonl(
        src / "docs.jsonl",
        [
            {
                "id": "a",
                "text": "Invoice 7 from Acme. Pay $1,250.00 by 2026-01-15 to billing@acme.example.",
                "lang": "en",
            },
            {"id": "b", "text": "Packing short windows into one row removes padding. " * 60},
        ],
    )
    (src / "broken.jsonl").write_text('{"id": "c", "text": \n')
    out = tmp_path_factory.mktemp("out")
    run_job(src / "*.jsonl", out, "--extract", "keyphrases,summary,labels,entities")
    return out


@pytest.mark.parametrize(
    ("name", "columns"), [("documents", DOCUMENTS), ("chunks", CHUNKS), ("extractions", EXTRACTIONS)]
)
def test_table_schemas(run, name, columns):
    t = table(run, name)
    assert t is not None and t.num_rows > 0, f"{name}: no rows to check"
    assert [(f.name, f.type, f.nullable) for f in t.schema] == columns


def test_extractions_cover_every_kind_with_and_without_spans(run):
    rows = table(run, "extractions").to_pylist()
    kinds = {r["kind"] for r in rows}
    assert {"keyphrase", "summary", "label", "entity:money", "entity:email", "entity:date"} <= kinds
    assert all(r["start_char"] is None and r["end_char"] is None for r in rows if r["kind"] == "label")
    assert all(r["start_char"] is not None for r in rows if r["kind"] != "label")


def test_error_lines(run):
    (err,) = outputs.read_errors(str(run))
    assert set(err) == ERROR_KEYS and err["error"] == "invalid_json" and err["row"] == 0
    assert err["source"].endswith("broken.jsonl") and err["stage"] == "parse" and err["doc_id"] is None


def test_manifest_and_cost_files(run):
    m = json.loads((run / "_manifest.json").read_text())
    assert {"inputs", "counts", "accounting", "model", "attention", "versions", "platform", "options", "cost"} <= set(m)
    assert m["accounting"]["holds"] and (m["counts"]["read"], m["counts"]["ok"], m["counts"]["rejected"]) == (3, 2, 1)
    assert {"requested", "used", "reason"} <= set(m["attention"])
    for f in ("report.json", "report.md", "stages.png"):
        assert (run / "_cost" / f).stat().st_size > 0
