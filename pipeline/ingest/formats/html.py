"""HTML (.html, .htm): one document per file. By default its main content and title
(--html-text main: trafilatura, in the sandbox); --html-text all keeps every visible text,
as does a page where the extractor finds no main content (html.parser, in the sandbox too)."""

from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Provenance, reject
from docbeam.pipeline.ingest.adapters import html_main, html_visible
from docbeam.pipeline.ingest.fields import STAGE, Record, document
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import decode_markup, read_capped
from docbeam.pipeline.ingest.sandbox import ParseProblem, Sandbox


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    data = read_capped(path, f, cfg.max_doc_bytes)
    markup = data if not isinstance(data, bytes) else decode_markup(path, data, 0, path)
    yield markup if not isinstance(markup, str) else page(path, 0, path, markup, cfg, sandbox)


def page(
    path: str,
    row: int,
    doc_id: str | None,
    markup: str,
    cfg: ParseConfig,
    sandbox: Sandbox,
    url: str | None = None,
    crawl_date: str | None = None,
) -> Record:
    """One web page's Document (or why not), its text chosen by --html-text; `url` and
    `crawl_date` come from a WARC record."""
    title, body, headings = "", "", []
    if cfg.html_text == "main":
        try:
            title, body, headings = sandbox.call(html_main.extract, markup)
        except ParseProblem as p:
            return reject(STAGE, p.code, path, p.message, row=row, doc_id=doc_id)
    if not body.strip():
        # --html-text all, or a page the extractor finds no main content in (or cannot parse:
        # lxml gives up on nesting thousands of levels deep): every visible text, as
        # trafilatura's own baseline would, rather than losing the page. In the sandbox too:
        # pure Python, linear now (html_visible), but a parser of hostile markup gets a deadline,
        # and only a process can be stopped at one (an unclosed `<!--` of 256 KiB once took 132 s).
        try:
            text, headings = sandbox.call(html_visible.visible_page, markup)
        except ParseProblem as p:
            return reject(STAGE, p.code, path, p.message, row=row, doc_id=doc_id)
        found = tuple((at, heading) for at, heading in headings)  # lists once through the sandbox
        prov = Provenance(format="html", sections=found, url=url, crawl_date=crawl_date)
        return document(path, row, doc_id, text, prov)
    headline = body.lstrip().split("\n", 1)[0]
    text = f"{title}\n\n{body}" if title and headline not in title else body  # no title twice in a row
    shift = len(text) - len(body)
    sections = [(0, title)] if title else []
    for at, heading in headings:
        if not sections or heading != sections[-1][1]:  # the title repeated as the first heading
            sections.append((at + shift, heading))
    prov = Provenance(format="html", sections=tuple(sections), url=url, crawl_date=crawl_date)
    return document(path, row, doc_id, text, prov)
