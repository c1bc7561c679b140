import gzip
import io
import json
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline.core.records import Document, Rejection
from docbeam.pipeline.ingest.adapters.html_visible import visible_text
from docbeam.pipeline.ingest.parse import ParseConfig, format_of, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox


def parse(path: str, data: bytes, **cfg) -> list:
    return list(parse_file(path, lambda: io.BytesIO(data), ParseConfig(**cfg)))


def errors(records) -> list[str]:
    return [r.error for r in records if isinstance(r, Rejection)]


def docs(records) -> list[Document]:
    return [r for r in records if isinstance(r, Document)]


def test_formats_by_extension():
    assert format_of("a/b.JSONL") == "jsonl"
    assert format_of("gs://b/x.jsonl.gz") == "jsonl"
    assert format_of("x.parquet") == "parquet"
    assert format_of("x.txt") == "text" and format_of("x.md") == format_of("x.markdown") == "markdown"
    assert format_of("x.htm") == format_of("x.html") == "html"
    assert format_of("x.pdf") == "pdf" and format_of("x.warc.gz") == "warc" and format_of("x.tsv") == "csv"
    assert format_of("x.xyz") is None


def test_jsonl_ids_metadata_and_row_errors():
    lines = [
        {"id": "a", "text": "alpha", "lang": "en"},
        {"text": "no id here"},
        "not json {",
        [1, 2],
        {"id": "c"},
        {"id": "d", "text": 42},
        {"id": "e", "text": "   "},
        {"id": True, "text": "bool id"},
        {"id": 7, "text": "int id"},
    ]
    raw = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines).encode() + b"\n\n"
    out = parse("/d/f.jsonl", raw)
    good = docs(out)
    assert [(d.doc_id, d.text) for d in good] == [("a", "alpha"), ("/d/f.jsonl#1", "no id here"), ("7", "int id")]
    assert good[0].metadata == {"lang": "en"} and good[0].uid == "/d/f.jsonl#0"
    assert errors(out) == ["invalid_json", "not_an_object", "missing_text", "text_not_string", "empty_text", "bad_id"]
    rej = [r for r in out if isinstance(r, Rejection)]
    assert [r.row for r in rej] == [2, 3, 4, 5, 6, 7]
    assert all("/d/f.jsonl row" in r.message for r in rej)


def test_jsonl_gz_truncated_keeps_rows_before_the_break():
    good = b"".join(json.dumps({"id": str(i), "text": f"doc {i} " * 50}).encode() + b"\n" for i in range(200))
    blob = gzip.compress(good)
    out = parse("t.jsonl.gz", blob[: len(blob) // 2])
    assert errors(out) == ["truncated_gzip"]
    kept = docs(out)
    assert 0 < len(kept) < 200 and [d.doc_id for d in kept] == [str(i) for i in range(len(kept))]


def test_gzip_bomb_is_capped():
    bomb = gzip.compress(b"0" * (20 << 20))  # 20 MiB of zeros, ~20 KiB compressed
    out = parse("bomb.jsonl.gz", bomb, max_decompressed_bytes=1 << 20, max_doc_bytes=1 << 19)
    assert "decompressed_too_large" in errors(out) and not docs(out)


def test_oversized_line_is_rejected_without_losing_the_next():
    raw = (
        json.dumps({"id": "big", "text": "x" * 5000}).encode()
        + b"\n"
        + json.dumps({"id": "ok", "text": "fine"}).encode()
    )
    out = parse("f.jsonl", raw, max_doc_bytes=1000)
    assert errors(out) == ["document_too_large"] and [d.doc_id for d in docs(out)] == ["ok"]


def test_invalid_utf8_names_the_byte():
    raw = b'{"id": "a", "text": "caf\xe9"}\n{"id": "b", "text": "ok"}\n'
    out = parse("f.jsonl", raw)
    assert errors(out) == ["invalid_utf8"] and "byte" in out[0].message
    assert [d.doc_id for d in docs(out)] == ["b"]


def test_empty_files():
    for name in ("e.jsonl", "e.txt", "e.html"):
        assert errors(parse(name, b"")) == ["empty_file"]


def test_binary_junk_with_text_extension():
    assert errors(parse("junk.txt", bytes(range(256)) * 10)) in (["binary_content"], ["invalid_utf8"])
    assert errors(parse("junk.txt", b"\x00\x01\x02abc" * 100)) == ["binary_content"]


def test_text_and_markdown_are_one_document():
    out = parse("/x/n.md", b"# Title\n\nBody text.")
    assert [(d.doc_id, d.text) for d in docs(out)] == [("/x/n.md", "# Title\n\nBody text.")]


def test_html_visible_text_only():
    html = (
        b"<html><head><title>T</title><style>p{}</style><script>var x='hidden';</script></head>"
        b"<body><h1>Head&amp;line</h1><p>First <b>bold</b> para.</p><noscript>no</noscript><p>Second</p></body></html>"
    )
    (d,) = docs(parse("p.html", html, html_text="all"))
    assert d.text == "Head&line\nFirst bold para.\nSecond"


def test_deeply_nested_html_does_not_recurse():
    html = "<div>" * 100_000 + "deep text" + "</div>" * 100_000
    assert visible_text(html) == "deep text"


N = 1 << 17


@pytest.mark.parametrize(
    ("markup", "text"),
    [
        # 512 KiB of unclosed comments: quadratic before (128 KiB took 12.6 s), and `<!--` as text
        ("<p>before</p>" + "<!--" * N, "before"),
        # in-page links nested 128 Ki deep: each one's whole text was joined to look for a glyph
        ("<a href='#'>x" * N + "</a>" * N, "x" * N),
    ],
    ids=["unclosed-comments", "nested-links"],
)
def test_visible_text_is_linear_and_holds_no_markup(markup, text):
    with Sandbox(timeout_s=20) as box:  # the quadratic reader took minutes here: stopped, never a hang
        box.call(visible_text, "<p>warm</p>")  # the child is started and ready: its start is not timed
        start = time.monotonic()
        (d,) = list(parse_file("p.html", lambda: io.BytesIO(markup.encode()), ParseConfig(html_text="all"), None, box))
        took = time.monotonic() - start
    assert isinstance(d, Document), d
    assert d.text == text and "<" not in d.text and took < 10


def test_parquet_rows_and_wrong_schema():
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": ["a", "b", None], "text": ["one", None, "three"], "n": [1, 2, 3]}), buf)
    out = parse("t.parquet", buf.getvalue())
    assert [(d.doc_id, d.text, d.metadata) for d in docs(out)] == [
        ("a", "one", {"n": 1}),
        ("t.parquet#2", "three", {"n": 3}),
    ]
    assert errors(out) == ["missing_text"]
    wrong = io.BytesIO()
    pq.write_table(pa.table({"id": ["a"], "body": [1]}), wrong)
    (rej,) = parse("w.parquet", wrong.getvalue())
    assert rej.error == "wrong_schema" and "body: int64" in rej.message
    assert errors(parse("bad.parquet", b"PAR1 not really")) == ["invalid_parquet"]


def test_unknown_extension_is_a_clear_rejection_unless_the_content_is_text():
    (rej,) = parse("x.xyz", b"\x00\x01 binary, no signature")
    assert rej.error == "unsupported_format" and ".jsonl" in rej.message and ".pdf" in rej.message
    for name in ("x.xyz", "LICENSE"):
        assert [(d.text, d.provenance.format) for d in docs(parse(name, b"plain words"))] == [("plain words", "text")]


@pytest.mark.parametrize("field", ["body"])
def test_configurable_fields(field):
    out = parse("f.jsonl", json.dumps({"key": "k1", field: "hello"}).encode(), id_field="key", text_field=field)
    assert [(d.doc_id, d.text) for d in docs(out)] == [("k1", "hello")]


def test_deeply_nested_json_is_a_rejection_not_a_crash():
    raw = b"[" * 100_000 + b"\n" + json.dumps({"id": "ok", "text": "fine"}).encode()
    out = parse("deep.jsonl", raw)
    assert errors(out) == ["invalid_json"] and "nested too deeply" in out[0].message
    assert [d.doc_id for d in docs(out)] == ["ok"]


def test_decompression_cap_applies_to_compressed_files_only():
    raw = json.dumps({"id": "a", "text": "x" * 80}).encode() + b"\n"
    assert [d.doc_id for d in docs(parse("plain.jsonl", raw, max_decompressed_bytes=50))] == ["a"]
    assert errors(parse("small.jsonl.gz", gzip.compress(raw), max_decompressed_bytes=50)) == ["decompressed_too_large"]


def test_the_file_is_closed_after_parsing():
    handle = io.BytesIO(json.dumps({"id": "a", "text": "x"}).encode())
    list(parse_file("f.jsonl", lambda: handle, ParseConfig()))
    assert handle.closed
