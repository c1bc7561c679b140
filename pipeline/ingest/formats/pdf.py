"""PDF: one document per file, its text page by page through PDFium (in the sandbox).

The text keeps the reading order PDFium gives, cleaned page by page (pdf_clean: words
hyphenated at line ends made whole, running headers, footers and dot leaders dropped); pages
are joined by a blank line and the offset where each cleaned page starts is kept
(Provenance.pages), so every chunk knows its pages. Bookmarks become section titles, placed
where their title appears on their page.
"""

from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Provenance, reject
from docbeam.pipeline.ingest.adapters import pdf_text
from docbeam.pipeline.ingest.fields import STAGE, Record, document
from docbeam.pipeline.ingest.layout import join_blocks
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.pdf_clean import CleanPages, clean_pages
from docbeam.pipeline.ingest.reading import read_capped
from docbeam.pipeline.ingest.sandbox import ParseProblem, Sandbox


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    data = read_capped(path, f, cfg.max_doc_bytes)
    if not isinstance(data, bytes):
        yield data
        return
    if b"%%EOF" not in data[-1024:]:
        # PDFium would rebuild what it can of a cut file and say nothing: half a document.
        yield reject(STAGE, "pdf_corrupt", path, "truncated: no %%EOF marker at the end", row=0, doc_id=path)
        return
    try:
        pages, outline = sandbox.call(pdf_text.extract, data, cfg.max_pdf_pages, cfg.max_doc_bytes)
    except ParseProblem as p:
        yield reject(STAGE, p.code, path, p.message, row=0, doc_id=path)
        return
    clean = clean_pages(pages, keep=outline)
    text, starts = join_blocks(clean.pages)
    if not text:  # cleaning never loses a document: what it would empty, it leaves as it was
        clean = CleanPages(pages, running=0, leaders=0)
        text, starts = join_blocks(pages)
    if not text:
        problem = f"no text layer on any of its {len(pages)} page(s) (scanned? docbeam does no OCR)"
        yield reject(STAGE, "pdf_no_text", path, problem, row=0, doc_id=path)
        return
    sections = []
    for index, title in outline:  # where the title stands on its page, else the page's start
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        at = text.find(title, starts[index], end)
        sections.append((at if at >= 0 else starts[index], title))
    sections.sort(key=lambda s: s[0])
    prov = Provenance(
        format="pdf",
        pages=tuple(starts),
        sections=tuple(sections),
        running_lines=clean.running,
        leader_lines=clean.leaders,
    )
    yield document(path, 0, path, text, prov)
