"""Text that is not valid Unicode is its record's problem, never the run's (ingest.scalar_values):
a lone surrogate in a JSON text, id or metadata value, or bytes that are not UTF-8 in a Parquet
string cell, reject that record; the good records of the same file come out, the run finishes
and its accounting holds."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline.core.records import Document, Rejection
from docbeam.pipeline.ingest import scalar_values
from tests.helpers import run_job, table

LINES = [
    '{"id": "g", "text": "good text about otters"}',
    '{"id": "s", "text": "x \\ud800 y"}',  # the reproduction
    '{"id": "s\\udfff", "text": "bad id"}',
    '{"id": "m", "text": "bad metadata", "tags": ["ok", {"k": "v\\udc80"}]}',
    '{"id": "p", "text": "a pair \\ud83d\\ude00 is one character"}',  # valid: an astral character
]


def test_a_record_that_is_not_valid_unicode_is_rejected_and_the_run_goes_on(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_text("\n".join(LINES) + "\n")
    cells = pa.array([b"parquet text", b"x \xed\xa0\x80 y"], pa.binary()).view(pa.string())  # ED A0 80: no UTF-8
    pq.write_table(pa.table({"id": ["q1", "q2"], "text": cells}), src / "b.parquet")
    res = run_job(src, tmp_path / "out", "--max-rejected", "100%")
    assert res.manifest["accounting"]["holds"]
    docs = {r["doc_id"]: r["text"] for r in table(tmp_path / "out", "documents", ["doc_id", "text"]).to_pylist()}
    assert docs == {"g": "good text about otters", "p": "a pair \U0001f600 is one character", "q1": "parquet text"}
    rows = [json.loads(line) for f in (tmp_path / "out" / "errors").glob("*.jsonl") for line in f.open()]
    errors = {(r["doc_id"], r["error"]): r["message"] for r in rows}
    assert set(errors) == {
        ("s", "invalid_unicode"),
        ("s\\udfff", "invalid_unicode"),  # escaped: the rejection itself can be written
        ("m", "invalid_unicode"),
        (None, "invalid_utf8"),
    }
    assert "the text holds \\ud800 at character 2" in errors["s", "invalid_unicode"]
    assert "metadata.tags.1.k holds \\udc80" in errors["m", "invalid_unicode"]
    assert errors[None, "invalid_utf8"].endswith("b.parquet row 1: a string field holds bytes that are not UTF-8")


@pytest.mark.parametrize(
    "text, ok", [("plain", True), ("é ü 日本", True), ("\U0001f600", True), ("a\ud800", False), ("\udfff", False)]
)
def test_only_lone_surrogates_are_invalid(text, ok):
    assert scalar_values.valid(text) is ok
    doc = Document(uid="u", doc_id="d", source="f", row=0, text=text)
    assert isinstance(scalar_values.checked(doc), Document if ok else Rejection)
