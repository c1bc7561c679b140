"""Content sniffing: what real files' first bytes say they are."""

import bz2
import gzip
import io
import json
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline.ingest.detect import sniff
from tests.ingest import files


def parquet() -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table({"id": ["a"], "text": ["x"]}), out)
    return out.getvalue()


def plain_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("notes.txt", "hello")
    return out.getvalue()


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (files.multipage_pdf, "pdf"),
        (lambda: b"junk before the header\n" + files.table_pdf(), "pdf"),
        (files.report_docx, "docx"),
        (plain_zip, "zip"),
        (files.crawl_warc, "warc"),
        (lambda: files.crawl_warc(gzip=False), "warc"),
        (parquet, "parquet"),
        (lambda: gzip.compress(json.dumps({"id": 1, "text": "x"}).encode()), "gzip"),
        (files.png, "png"),
        (lambda: files.news_page().encode(), "html"),
        (lambda: b"\xef\xbb\xbf\n  <HTML><body>x</body></HTML>", "html"),
        (lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "ole"),
        (lambda: b'{"id": 1, "text": "<html> is a tag"}\n', "text"),
        (lambda: "plain words, ünïcode".encode(), "text"),
        (lambda: ("a" + "é" * 4000).encode(), "text"),  # a character cut at the end of the head is still text
        (lambda: b"", "text"),
        (lambda: b"BZh... is how bzip2 files begin; this is a text about them", "text"),
        (lambda: "Latin-1, not UTF-8: café".encode("latin-1"), None),
        (lambda: b"\x00\x01\x02 no signature" * 10, None),
        (lambda: bz2.compress(b"hello"), "bzip2"),
    ],
)
def test_sniff(make, kind):
    assert sniff(io.BytesIO(make())) == kind
