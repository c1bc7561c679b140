"""Real documents through the real pipeline (Beam FnApiRunner, the real model), once for the
module: PDFs, a Word report, a web page, a web archive, a CSV, files whose extension lies,
and files that break their parser. Every input document ends in documents/ or in exactly
one error line with its code; provenance reaches the chunks."""

import datetime as dt
import json
import re

import pytest

from docbeam.pipeline.io import outputs
from tests.helpers import run_job, table
from tests.ingest import files

pytestmark = pytest.mark.slow

GOOD = {
    "book.pdf": files.multipage_pdf,
    "columns.pdf": files.two_column_pdf,
    "census.pdf": files.table_pdf,
    "greek.pdf": files.non_latin_pdf,
    "pdf-named.txt": files.multipage_pdf,  # the extension lies: read as the PDF it is
    "survey.pdf": lambda: files.report_pdf().data,  # running header, footer, dot leaders
    "report.docx": files.report_docx,
    "otters.html": lambda: files.news_page(paragraphs=3).encode(),
    "crawl.warc.gz": files.crawl_warc,
    "faq.csv": files.faq_csv,
    "guide.md": lambda: MARKDOWN.encode(),
    "tool.1.txt": lambda: MAN_PAGE.encode(),
}
# Markdown with front matter, a licence comment and headings; a man page as `man | col -b` prints it
MARKDOWN = (
    "---\ntitle: Otter guide\nversion: 3\n---\n<!-- SPDX-License-Identifier: MIT -->\n# Otter guide\n\n"
    + "Otters live along rivers and eat fish. " * 30
    + "\n\n## Counting\n\n"
    + "Volunteers count otters from the bank every spring. " * 30
    + "\n\n```sh\notters count --river Tay\n```\n"
)
MAN_PAGE = (
    "TOOL(1)\t\t\t User Commands\t\t\t TOOL(1)\n\nNAME\n       tool - count otters\n\nDESCRIPTION\n"
    + "       The tool counts otters along a river and writes a report.\n" * 20
    + "\nacme tools 2.4\t\tMarch 2024\t\t\t TOOL(1)\n"
)
BAD = {
    "locked.pdf": (files.encrypted_pdf, "pdf_encrypted"),
    "cut.pdf": (files.truncated_pdf, "pdf_corrupt"),
    "scan.pdf": (files.image_only_pdf, "pdf_no_text"),
    "photo.txt": (files.png, "format_mismatch"),
    "slow.pdf": (files.slow_pdf, "parse_timeout"),
    # Trips the memory bound, or the time bound first on a loaded machine: a test of bounds
    # must not depend on which one trips first, and either code is right for this file.
    "bomb.pdf": (files.memory_bomb_pdf, ("parse_crashed", "parse_timeout")),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    src = tmp_path_factory.mktemp("documents")
    for name, make in GOOD.items():
        (src / name).write_bytes(make())
    for name, (make, _) in BAD.items():
        (src / name).write_bytes(make())
    out = tmp_path_factory.mktemp("out")
    # A tight time and memory bound, so the slow PDF times out and the bomb crashes its parser
    # while every other file parses well inside both.
    res = run_job(src / "*", out, "--parse-timeout", "4", "--parse-memory-mb", "256")
    docs = {d["source"].rsplit("/", 1)[-1] + "|" + d["doc_id"]: d for d in table(out, "documents").to_pylist()}
    chunks = table(out, "chunks").to_pylist()
    return res, docs, chunks, outputs.read_errors(str(out))


def doc(run, source: str) -> dict:
    (found,) = [d for key, d in run[1].items() if key.startswith(source + "|")]
    return found


def chunks_of(run, document: dict) -> list[dict]:
    return sorted((c for c in run[2] if c["doc_id"] == document["doc_id"]), key=lambda c: c["chunk_index"])


def test_every_document_is_written_or_one_error_line_and_warc_records_are_counted(run):
    res, docs, _, errors = run
    found = {e["source"].rsplit("/", 1)[-1]: e["error"] for e in errors}
    assert len(errors) == len(found) and found.keys() == BAD.keys(), errors
    assert all(found[name] in (code if isinstance(code, tuple) else (code,)) for name, (_, code) in BAD.items()), found
    assert all(e["message"].startswith(e["source"]) and e["stage"] == "parse" for e in errors)
    counts = res.manifest["counts"]
    assert res.manifest["accounting"]["holds"] and counts["read"] == len(docs) + len(errors) == 15 + 6
    assert counts["skipped"] == 7 and counts["skipped_by_reason"] == {"not_response": 5, "not_html": 1, "not_200": 1}
    formats = {key.split("|")[0]: d["format"] for key, d in docs.items()}
    assert formats == {
        "book.pdf": "pdf",
        "columns.pdf": "pdf",
        "census.pdf": "pdf",
        "greek.pdf": "pdf",
        "pdf-named.txt": "pdf",
        "survey.pdf": "pdf",
        "report.docx": "docx",
        "otters.html": "html",
        "crawl.warc.gz": "html",
        "faq.csv": "csv",
        "guide.md": "markdown",
        "tool.1.txt": "text",
    }


def test_chunks_know_their_pages(run):
    book = doc(run, "book.pdf")
    mine = chunks_of(run, book)
    assert len(mine) > 2 and len({(c["page_start"], c["page_end"]) for c in mine}) > 2
    for page, sentence in enumerate(files.PAGE_SENTENCES, 1):
        pattern = r"\s+".join(map(re.escape, sentence.split()))
        holding = [c for c in mine if re.search(pattern, c["text"])]
        assert holding, sentence
        assert all(c["page_start"] <= page <= c["page_end"] for c in holding)
    assert mine[0]["page_start"] == 1 and mine[-1]["page_end"] == 5
    assert all(c["text"] == book["text"][c["start_char"] : c["end_char"]] for c in mine)
    assert [c["section"] for c in mine][0] == "Chapter 1: navigation"


def test_pdf_layout_lines_leave_chunks_on_their_pages_and_are_counted(run):
    known = files.report_pdf()
    survey = doc(run, "survey.pdf")
    mine = chunks_of(run, survey)
    pages = [" ".join(" ".join(page).split()) for page in known.pages]
    assert len({c["page_start"] for c in mine}) > 2
    for c in mine:  # where the chunk begins and ends, its page numbers say
        words = c["text"].split()
        assert " ".join(words[:6]) in pages[c["page_start"] - 1], c
        assert " ".join(words[-6:]) in pages[c["page_end"] - 1], c
    assert not [line for line in known.layout if line in survey["text"]]
    dropped = run[0].manifest["counts"]["pdf_layout_lines_dropped"]
    # the book's 5 and survey's 7 pages: no line of the book is layout; the man page's 2 frame lines
    assert dropped == {"running": 2 * len(known.pages) + 2, "leader": len(files.REPORT_TOPICS)}
    # the Markdown's front matter (4 lines) and comment (1 line) too
    assert run[0].manifest["counts"]["layout_lines_dropped"] == {**dropped, "markup": 5}


def test_markdown_gives_metadata_and_sections_and_a_man_page_loses_its_frame(run):
    guide = doc(run, "guide.md")
    assert guide["format"] == "markdown" and json.loads(guide["metadata"]) == {"title": "Otter guide", "version": 3}
    assert guide["text"].startswith("# Otter guide\n") and "SPDX" not in guide["text"]
    sections = [c["section"] for c in chunks_of(run, guide)]
    assert sections[0] == "Otter guide" and sections[-1] == "Counting"
    page = doc(run, "tool.1.txt")
    assert page["text"].startswith("NAME\n") and "TOOL(1)" not in page["text"]


def test_word_chunks_carry_their_heading(run):
    report = doc(run, "report.docx")
    text, mine = report["text"], chunks_of(run, report)
    headings = ["Annual report 2025", *files.DOCX_SECTIONS]
    starts = sorted((text.index(f"{h}\n\n"), h) for h in headings)
    for c in mine:
        assert c["section"] == [h for at, h in starts if at <= c["start_char"]][-1]
        assert c["page_start"] is None
    assert len({c["section"] for c in mine}) >= 3
    assert "Region | Sales\nNorth | 1200" in text


def test_web_pages_are_their_main_content_with_url_and_crawl_date(run):
    page = doc(run, "otters.html")
    assert files.ARTICLE[3] in page["text"] and not [b for b in files.BOILERPLATE if b in page["text"]]
    assert page["url"] is None and page["crawl_date"] is None
    crawled = sorted((d for key, d in run[1].items() if key.startswith("crawl.warc.gz|")), key=lambda d: d["doc_id"])
    assert [d["doc_id"] for d in crawled] == ["https://news.example/cafe", "https://news.example/otters"]
    assert [d["url"] for d in crawled] == [d["doc_id"] for d in crawled]
    assert {d["crawl_date"] for d in crawled} == {dt.datetime(2024, 5, 1, 12, 30, tzinfo=dt.UTC)}
    assert "Le café est très bon" in crawled[0]["text"]
    assert not [b for b in files.BOILERPLATE if b in crawled[1]["text"]]


def test_columns_tables_non_latin_and_csv_rows(run):
    squash = " ".join(doc(run, "columns.pdf")["text"].split())
    assert " ".join(files.LEFT_COLUMN.split()) in squash and " ".join(files.RIGHT_COLUMN.split()) in squash
    assert "Lisbon 545000 Portugal" in " ".join(doc(run, "census.pdf")["text"].split())
    greek = doc(run, "greek.pdf")
    assert any(files.GREEK in c["text"] and files.CYRILLIC in c["text"] for c in chunks_of(run, greek))
    faq = sorted((d for key, d in run[1].items() if key.startswith("faq.csv|")), key=lambda d: d["doc_id"])
    assert [(d["doc_id"], d["text"], json.loads(d["metadata"])) for d in faq] == [
        (r["id"], r["text"], {"lang": r["lang"]}) for r in files.CSV_ROWS
    ]
