"""Each new format through parse_file, on real files made by real tools (tests/ingest/files.py)."""

import gzip
import io
import re
import zipfile
from collections import Counter

import pytest

from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core.records import Document, Rejection, Skipped
from docbeam.pipeline.graph.assemble import pages_of, section_of
from docbeam.pipeline.ingest.chunking import Windowing, chunk_documents
from tests.benchmarks.pdf_text_quality import agreement, layout_mostly, layout_spans
from tests.ingest import files


def one(records: list, kind=Document):
    assert len(records) == 1 and isinstance(records[0], kind), records
    return records[0]


def rejected(records: list, path: str) -> str:
    """The error code of a file that must end in exactly one error line naming it."""
    rej = one(records, Rejection)
    assert rej.source == path and rej.message.startswith(path)
    return rej.error


def squash(text: str) -> str:
    return " ".join(text.split())


def span(text: str, sentence: str) -> tuple[int, int]:
    """Where `sentence` stands in `text`, line breaks (the PDF's wrapping) allowed between its words."""
    found = re.search(r"\s+".join(map(re.escape, sentence.split())), text)
    assert found, sentence
    return found.span()


# ---- PDF -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def book(parse) -> Document:
    return one(parse("/in/book.pdf", files.multipage_pdf()))


def test_pdf_every_sentence_knows_its_page(book):
    prov = book.provenance
    assert prov.format == "pdf" and len(prov.pages) == 5 and prov.pages[0] == 0
    for page, sentence in enumerate(files.PAGE_SENTENCES, 1):
        assert pages_of(prov, *span(book.text, sentence)) == {"page_start": page, "page_end": page}
    assert pages_of(prov, 0, len(book.text)) == {"page_start": 1, "page_end": 5}


def test_pdf_bookmarks_are_sections_where_their_titles_stand(book):
    titles = [f"Chapter {i}: {topic}" for i, topic in enumerate(files.TOPICS, 1)]
    assert [title for _, title in book.provenance.sections] == titles
    for at, title in book.provenance.sections:
        assert book.text.index(title) == at
    third, _ = span(book.text, files.PAGE_SENTENCES[2])
    assert section_of(book.provenance, third) == titles[2]


def test_pdf_reading_order_two_columns_tables_and_non_latin(parse):
    columns = one(parse("/in/columns.pdf", files.two_column_pdf())).text
    # each column reads through before the other starts: no line-by-line interleaving
    assert squash(files.LEFT_COLUMN) in squash(columns) and squash(files.RIGHT_COLUMN) in squash(columns)
    table = one(parse("/in/table.pdf", files.table_pdf())).text
    for row in files.TABLE:
        assert " ".join(row) in squash(table)
    assert squash(table).index("Lisbon") < squash(table).index("Oslo")
    foreign = one(parse("/in/greek.pdf", files.non_latin_pdf())).text
    assert files.GREEK in foreign and files.CYRILLIC in foreign


@pytest.fixture(scope="module")
def report(parse) -> tuple[files.KnownPdf, Document]:
    known = files.report_pdf()
    return known, one(parse("/in/report.pdf", known.data))


def test_pdf_words_hyphenated_at_line_ends_come_back_whole(report):
    known, doc = report
    assert "\ufffe" not in doc.text and "\u00ad" not in doc.text
    for page in known.pages:
        for paragraph in page:
            assert squash(paragraph) in squash(doc.text)  # 'Conservation', not 'Conser\ufffevation'


def test_pdf_running_headers_footers_and_leaders_leave_the_text_offsets_stay_right(report):
    known, doc = report
    lines = {squash(line) for line in doc.text.split("\n")}
    assert not lines & {squash(line) for line in known.layout}
    prov = doc.provenance
    assert (prov.running_lines, prov.leader_lines) == (2 * len(known.pages), len(files.REPORT_TOPICS))
    # each page starts at its first kept line; every paragraph, and each chapter's bookmark, on its page
    assert len(prov.pages) == len(known.pages)
    for number, (start, page) in enumerate(zip(prov.pages, known.pages), 1):
        assert doc.text.startswith(page[0], start)
        for paragraph in page:
            assert pages_of(prov, *span(doc.text, paragraph)) == {"page_start": number, "page_end": number}
    for k, topic in enumerate(files.REPORT_TOPICS):
        assert prov.sections[k] == (prov.pages[k + 2], f"{k + 1}. {topic}")


def test_pdf_text_agrees_with_the_known_text_and_no_chunk_is_mostly_layout(report):
    # issue 24's metrics (tests/benchmarks/pdf_text_quality.py): main's text agreed 0.95 here,
    # and one chunk of six was mostly header, footer and contents leaders
    known, doc = report
    assert agreement(doc.text, known.text) > 0.99
    tokenizer, special = load_tokenizer(default_checkpoint_dir())
    ((_, chunks),) = chunk_documents([doc], tokenizer, special, Windowing.of(256))
    labels = {squash(line) for line in known.layout}  # the generator's list, not the heuristic's
    spans = layout_spans(doc.text, doc.provenance.pages, lambda _, line: line in labels)
    assert layout_mostly([(c.start_char, c.end_char) for c in chunks], spans) == 0


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (files.encrypted_pdf, "pdf_encrypted"),
        (files.truncated_pdf, "pdf_corrupt"),
        (files.image_only_pdf, "pdf_no_text"),
        (lambda: b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n", "pdf_corrupt"),
    ],
)
def test_bad_pdfs_are_one_error_line_each(parse, make, code):
    assert rejected(parse("/in/bad.pdf", make()), "/in/bad.pdf") == code


def test_pdf_page_and_size_limits(parse, book):
    data = files.multipage_pdf()
    assert rejected(parse("/in/long.pdf", data, max_pdf_pages=4), "/in/long.pdf") == "pdf_too_many_pages"
    assert rejected(parse("/in/big.pdf", data, max_doc_bytes=len(data) - 1), "/in/big.pdf") == "document_too_large"
    assert len(book.text) > len(data)  # compressed: more characters than bytes, so the text cap bites too
    assert rejected(parse("/in/wordy.pdf", data, max_doc_bytes=len(data)), "/in/wordy.pdf") == "document_too_large"


# ---- Word ----------------------------------------------------------------------------------


def test_docx_paragraphs_tables_and_headings_in_order(parse):
    doc = one(parse("/in/report.docx", files.report_docx()))
    text = doc.text
    assert doc.provenance.format == "docx"
    order = ["Annual report 2025", "This report summarises", "Revenue", "Region | Sales\nNorth | 1200", "Costs"]
    assert [text.index(s) for s in order] == sorted(text.index(s) for s in order)
    assert doc.provenance.sections == tuple(
        (text.index(h), h) for h in ["Annual report 2025", "Revenue", "Costs", "Outlook"]
    )
    costs = text.index(files.DOCX_SECTIONS["Costs"])
    assert section_of(doc.provenance, costs) == "Costs"


def test_bad_docx(parse):
    data = files.report_docx()
    assert rejected(parse("/in/cut.docx", data[: len(data) // 2]), "/in/cut.docx") == "docx_corrupt"
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("notes.txt", "a zip, not a Word document")
    assert rejected(parse("/in/zip.docx", other.getvalue()), "/in/zip.docx") == "docx_corrupt"
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        for name in zipfile.ZipFile(io.BytesIO(data)).namelist():
            z.writestr(name, zipfile.ZipFile(io.BytesIO(data)).read(name))
        z.writestr("word/media/huge.bin", b"\0" * (8 << 20))
    assert rejected(parse("/in/bomb.docx", bomb.getvalue(), max_decompressed_bytes=4 << 20), "/in/bomb.docx") == (
        "decompressed_too_large"
    )


# ---- HTML ----------------------------------------------------------------------------------


def test_html_main_content_drops_the_boilerplate_and_keeps_the_title(parse):
    doc = one(parse("/in/otters.html", files.news_page().encode()))
    assert all(squash(s) in squash(doc.text) for s in files.ARTICLE)
    assert not [b for b in files.BOILERPLATE if b in doc.text]
    # the page's title names the section of what precedes the first heading; its headline (the
    # title without the site's name) starts the text once
    assert doc.text.startswith("River otters return to the Thames\n")
    assert doc.provenance.sections[0] == (0, "River otters return to the Thames | Example News")
    assert (doc.text.index("A cleaner river"), "A cleaner river") in doc.provenance.sections


def test_html_text_all_keeps_every_visible_text(parse):
    doc = one(parse("/in/otters.html", files.news_page().encode(), html_text="all"))
    assert all(b in doc.text for b in files.BOILERPLATE) and files.ARTICLE[1] in doc.text
    assert "dataLayer" not in doc.text
    headline = "River otters return to the Thames"
    assert [h for _, h in doc.provenance.sections] == [headline, "A cleaner river", files.BOILERPLATE[5]]


def manual() -> bytes:
    return files.DATA.joinpath("users-and-groups.html").read_bytes()


def heading_lines(doc: Document) -> list[str]:
    """Each section's heading as the text has it at its offset: the whole line there."""
    return [doc.text[at:].split("\n", 1)[0] for at, _ in doc.provenance.sections]


@pytest.mark.parametrize("mode", ["main", "all"])
def test_html_debian_manual_chapters_are_sections_on_lines_of_their_own(parse, mode):
    # trafilatura dropped both "Chapter N." headings: every chunk carried the page title
    doc = one(parse("/in/users-and-groups.html", manual(), html_text=mode))
    titles = [h for _, h in doc.provenance.sections]
    assert titles[-2:] == ["Chapter 1. Introduction", "Chapter 2. Users and Groups"]
    assert heading_lines(doc) == titles  # each offset is the start of its heading's line
    lines = doc.text.splitlines()
    assert lines.count("Chapter 1. Introduction") == 1 and doc.text.count("Chapter 1. Introduction") == 1
    after = lines[lines.index("Chapter 1. Introduction") + 1]
    assert after.lstrip().startswith("The Debian base-passwd package contains the master versions")
    assert section_of(doc.provenance, doc.text.index("Root is (typically) the superuser.")) == titles[-1]


@pytest.mark.parametrize("mode", ["main", "all"])
def test_html_sphinx_permalink_glyphs_are_not_text(parse, mode):
    data = files.DATA.joinpath("idle-help-excerpt.html").read_bytes()
    assert data.count("¶".encode()) == 3  # IDLE, Startup and Code Execution, Running user code
    doc = one(parse("/in/idle.html", data, html_text=mode))
    assert "¶" not in doc.text
    titles = [h for _, h in doc.provenance.sections]
    headings = ["IDLE", "Startup and Code Execution", "Running user code"]
    if mode == "main":  # the page's title names what precedes the first heading (nothing here)
        assert titles == ["IDLE — Python 3.12.0a0 documentation", *headings]
        assert heading_lines(doc)[1:] == headings
    else:  # every heading, the navigation's (above and below the body) too
        navigation = ["Table of Contents", "Previous topic", "Next topic", "This Page", "Navigation"]
        assert titles == [*navigation, *headings, *navigation]
        assert heading_lines(doc) == titles
    assert "Running user code\nWith rare exceptions" in doc.text


def test_html_text_all_puts_each_block_on_its_own_line(parse):
    doc = one(parse("/in/users-and-groups.html", manual(), html_text="all"))
    # the DocBook table of contents is a <dl> of <dt> entries: one a line, not glued together
    assert "Table of Contents\n1. Introduction\n2. Users and Groups\n" in doc.text
    assert "root\nRoot is (typically) the superuser.\ndaemon\n" in doc.text  # <dt>/<dd>


def test_html_charsets(parse):
    page = '<html><head><meta charset="windows-1252"></head><body><article><p>{}</p></article></body></html>'
    doc = one(parse("/in/cafe.html", page.format(files.FRENCH * 5).encode("cp1252")))
    assert "Le café est très bon" in doc.text
    undeclared = page.replace('<meta charset="windows-1252">', "").format(files.FRENCH * 5).encode("latin-1")
    assert rejected(parse("/in/latin1.html", undeclared), "/in/latin1.html") == "invalid_utf8"


def test_html_without_main_content_falls_back_to_the_visible_text(parse):
    nested = ("<div>" * 20000 + "deeply nested but readable text" + "</div>" * 20000).encode()  # lxml gives up
    assert one(parse("/in/nested.html", nested)).text == "deeply nested but readable text"
    empty = b"<html><body><script>var x = 1;</script><img src='a.png'></body></html>"
    assert rejected(parse("/in/empty.html", empty), "/in/empty.html") == "empty_text"


# ---- WARC ----------------------------------------------------------------------------------


def test_warc_html_responses_are_documents_the_rest_skipped_and_counted(parse):
    records = parse("/in/crawl.warc.gz", files.crawl_warc())
    docs = [r for r in records if isinstance(r, Document)]
    assert [d.doc_id for d in docs] == ["https://news.example/otters", "https://news.example/cafe"]
    assert [d.row for d in docs] == [2, 8] and not [r for r in records if isinstance(r, Rejection)]
    for d in docs:
        assert d.provenance.format == "html" and d.provenance.url == d.doc_id
        assert d.provenance.crawl_date == "2024-05-01T12:30:00+00:00"
    assert files.ARTICLE[1] in docs[0].text and not [b for b in files.BOILERPLATE if b in docs[0].text]
    assert docs[1].text.startswith("Café\n\nLe café est très bon")  # ISO-8859-1, as its Content-Type says
    skipped = Counter(r.reason for r in records if isinstance(r, Skipped))
    assert skipped == {"not_response": 5, "not_html": 1, "not_200": 1}
    assert len(records) == 9  # every record of the file, each exactly once


def test_warc_plain_and_all_text(parse):
    records = parse("/in/crawl.warc", files.crawl_warc(gzip=False), html_text="all")
    docs = [r for r in records if isinstance(r, Document)]
    assert len(docs) == 2 and files.BOILERPLATE[0] in docs[0].text


def test_damaged_warcs_keep_the_records_before_the_damage(parse):
    whole = files.crawl_warc()
    records = parse("/in/cut.warc.gz", whole[: len(whole) - 200])  # inside the last response
    assert [r.doc_id for r in records if isinstance(r, Document)] == ["https://news.example/otters"]
    (rej,) = [r for r in records if isinstance(r, Rejection)]
    assert rej.error == "truncated_gzip" and rej.row == 8 and records[-1] is rej
    plain = files.crawl_warc(gzip=False)
    records = parse("/in/cut.warc", plain[: len(plain) - 200])
    assert [r.error for r in records if isinstance(r, Rejection)] == ["warc_corrupt"]
    assert len(records) == 9
    junk = b"this is not a web archive\n" * 10  # text without the WARC signature: read as text
    assert one(parse("/in/junk.warc", junk)).provenance.format == "text"


# ---- CSV / TSV -----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "delimiter"), [("faq.csv", ","), ("faq.tsv", "\t"), ("faq.csv.gz", ",")])
def test_csv_rows_are_documents_with_metadata(parse, name, delimiter):
    data = files.faq_csv(delimiter)
    records = parse(f"/in/{name}", gzip.compress(data) if name.endswith(".gz") else data)
    assert [(d.doc_id, d.text, d.metadata) for d in records] == [
        (r["id"], r["text"], {"lang": r["lang"]}) for r in files.CSV_ROWS
    ]
    assert {d.provenance.format for d in records} == {"tsv" if ".tsv" in name else "csv"}


def test_csv_bad_rows_are_rejected_and_the_rest_read(parse):
    data = b"id,text\na,first\nb,too,many\nc,caf\xe9 latin-1\nd,\n,no id\n"
    records = parse("/in/f.csv", data)
    assert [(type(r).__name__, r.row) for r in records] == [
        ("Document", 0),
        ("Rejection", 1),
        ("Rejection", 2),
        ("Rejection", 3),
        ("Document", 4),
    ]
    assert [r.error for r in records if isinstance(r, Rejection)] == ["wrong_field_count", "invalid_utf8", "empty_text"]
    assert records[-1].doc_id == "/in/f.csv#4"
    assert rejected(parse("/in/g.csv", b"id,body\n1,x\n"), "/in/g.csv") == "wrong_schema"
    cut = gzip.compress(files.faq_csv())
    records = parse("/in/cut.csv.gz", cut[: len(cut) - 30])
    assert isinstance(records[-1], Rejection) and records[-1].error == "truncated_gzip"
    assert all(isinstance(r, Document) for r in records[:-1])


# ---- the extension lies --------------------------------------------------------------------


def test_content_wins_over_the_extension(parse):
    doc = one(parse("/in/report.txt", files.multipage_pdf()))
    assert doc.provenance.format == "pdf" and files.PAGE_SENTENCES[0] in doc.text
    assert one(parse("/in/page", files.news_page().encode())).provenance.format == "html"
    assert one(parse("/in/report.bin", files.report_docx())).provenance.format == "docx"
    crawl = [r for r in parse("/in/crawl.jsonl.gz", files.crawl_warc()) if isinstance(r, Document)]
    assert len(crawl) == 2
    # text without a signature is no PDF, Word file, Parquet file or web archive: read as text
    for name in ("notes.docx", "rows.pdf", "table.parquet", "crawl.warc", "LICENSE"):
        assert one(parse(f"/in/{name}", b'{"id": "r1", "text": "a line"}\n')).provenance.format == "text"
    assert one(parse("/in/rows.jsonl", b'{"id": "r1", "text": "a line"}\n')).provenance.format == "jsonl"
    rej = one(parse("/in/photo.txt", files.png()), Rejection)
    assert rej.error == "format_mismatch" and "PNG image" in rej.message
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504)
    rej = one(parse("/in/locked.docx", ole), Rejection)
    assert rej.error == "format_mismatch" and "password-protected" in rej.message


def test_pdf_cleaning_never_loses_a_document(parse):
    # a report printed as 4 identical pages was rejected 'nothing but layout lines' before
    def deck(pages: list[list[str]]) -> bytes:
        pdf = files._pdf()
        for lines in pages:
            pdf.add_page()
            for line in lines:
                pdf.multi_cell(0, 6, line, new_x="LMARGIN", new_y="NEXT")
        return bytes(pdf.output())

    page = ["Quarterly report", "Revenue grew by ten percent this quarter.", "Costs were flat."]
    doc = one(parse("/in/same.pdf", deck([page] * 4)))
    assert squash(doc.text) == squash(" ".join(page * 4))
    slides = [[f"Step {n}", f"Press the button number {n} to continue."] for n in range(1, 6)]
    doc = one(parse("/in/slides.pdf", deck(slides)))
    assert all(slide[1] in doc.text for slide in slides)
