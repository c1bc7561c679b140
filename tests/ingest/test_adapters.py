"""Each parsing library behind its adapter, called directly: an upgrade that changes one of
these APIs fails here, in the file named after it."""

import io

import pytest

from docbeam.pipeline.ingest.adapters import docx_text, html_main, pdf_text, warc_records
from docbeam.pipeline.ingest.sandbox import ParseProblem
from tests.ingest import files


def test_pypdfium2_pages_outline_and_errors():
    pages, outline = pdf_text.extract(files.multipage_pdf(), 100, 10**6)
    assert len(pages) == 5 and all("\r" not in p for p in pages)
    assert outline == [(i, f"Chapter {i + 1}: {t}") for i, t in enumerate(files.TOPICS)]
    for data, code in [(files.encrypted_pdf(), "pdf_encrypted"), (b"%PDF-1.4 nothing", "pdf_corrupt")]:
        with pytest.raises(ParseProblem) as err:
            pdf_text.extract(data, 100, 10**6)
        assert err.value.code == code


def test_python_docx_blocks_in_document_order():
    blocks = docx_text.extract(files.report_docx(paragraphs_per_section=1), 1 << 30)
    assert blocks[:3] == [
        ("Annual report 2025", True),
        ("This report summarises the year for shareholders and staff.", False),
        ("Revenue", True),
    ]
    assert ("Region | Sales\nNorth | 1200", False) in blocks
    assert [b for b, heading in blocks if heading] == ["Annual report 2025", "Revenue", "Costs", "Outlook"]


def test_trafilatura_title_main_text_and_headings():
    title, text, headings = html_main.extract(files.news_page())
    assert title == "River otters return to the Thames | Example News"
    assert files.ARTICLE[1] in text and files.BOILERPLATE[0] not in text
    assert (text.index("A cleaner river"), "A cleaner river") in headings
    assert html_main.extract("") == ("", "", [])


def test_warcio_record_fields_payload_and_completeness():
    data = files.crawl_warc(gzip=False)

    def cafe_payload(cap: int) -> bytes | None:
        for rec in warc_records.records(io.BytesIO(data)):
            if rec.kind == "response" and rec.uri == "https://news.example/cafe":
                return rec.payload(cap)

    assert "très bon".encode("latin-1") in cafe_payload(1 << 20) and cafe_payload(10) is None
    recs = []
    for rec in warc_records.records(io.BytesIO(data)):
        assert rec.complete()
        recs.append((rec.kind, rec.uri, rec.status, rec.content_type, rec.date))
    assert recs[0][0] == "warcinfo" and len(recs) == 9
    assert ("response", "https://news.example/old-otters", 301, "text/html", files.WARC_DATE) in recs
    assert ("request", "https://news.example/logo.png", None, None, files.WARC_DATE) in recs
    *_, last = warc_records.records(io.BytesIO(data[:-100]))
    assert not last.complete()
