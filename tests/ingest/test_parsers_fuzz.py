"""Property tests: no input bytes make a parser crash, lose a record or invent one."""

import gzip
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docbeam.pipeline.core.records import Document, Rejection, Skipped
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox

CFG = ParseConfig(max_doc_bytes=4096, max_decompressed_bytes=1 << 16)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SANDBOX = Sandbox()  # one child process for every example (PDF, Word, main-content HTML)


@pytest.fixture(scope="module", autouse=True)
def _sandbox_ends():
    yield
    SANDBOX.close()


def parse(name: str, data: bytes) -> list:
    out = list(parse_file(name, lambda: io.BytesIO(data), CFG, sandbox=SANDBOX))
    assert out and all(isinstance(r, Document | Rejection | Skipped) for r in out)
    for r in out:
        if isinstance(r, Skipped):
            assert r.source == name and r.reason
        elif isinstance(r, Rejection):
            assert r.message.startswith(name) and r.error
        else:
            assert r.text.strip() and r.doc_id
    return out


@FUZZ
@given(
    st.binary(max_size=3000),
    st.sampled_from(
        ["f.jsonl", "f.jsonl.gz", "f.txt", "f.md", "f.html", "f.parquet", "f.csv", "f.tsv", "f.warc", "f.pdf", "f.docx"]
    ),
)
def test_arbitrary_bytes_never_crash(data, name):
    parse(name, data)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
records = st.dictionaries(st.sampled_from(["id", "text", "meta", "x"]), json_values, max_size=4)


@FUZZ
@given(st.lists(records | json_values, min_size=1, max_size=20), st.booleans())
def test_every_jsonl_line_gives_exactly_one_record(lines, gz):
    raw = "\n".join(json.dumps(x) for x in lines).encode() + b"\n"
    out = parse("f.jsonl.gz" if gz else "f.jsonl", gzip.compress(raw) if gz else raw)
    assert len(out) == len(lines)  # one Document or one Rejection per line, never both, never none
    assert [r.row for r in out] == list(range(len(lines)))


@FUZZ
@given(st.text(max_size=2000))
def test_html_never_raises_and_hides_scripts(text):
    markup = f"<html><script>SECRET</script><body>{text}</body></html>"
    for rec in parse("f.html", markup.encode("utf-8", "surrogatepass")):
        if isinstance(rec, Document):
            assert "SECRET" not in rec.text or "SECRET" in text
