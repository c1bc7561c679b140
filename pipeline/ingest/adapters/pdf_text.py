"""PDF -> the text of each page and the outline, through PDFium (pypdfium2).

Runs in the sandbox only: PDFium must never be called from two threads at once, and it
aborts the process when an allocation fails. pypdfium2 is imported inside the functions: the
worker imports this module to name `extract` to the sandbox, and must not load PDFium (the
sandbox's child preloads it, sandbox.PRELOAD).
"""

from typing import TYPE_CHECKING

from docbeam.pipeline.ingest.sandbox import ParseProblem

if TYPE_CHECKING:
    import pypdfium2 as pdfium


def extract(data: bytes, max_pages: int, max_chars: int) -> tuple[list[str], list[tuple[int, str]]]:
    """(text of every page in order, [(0-based page index, bookmark title)]), in the
    reading order PDFium gives."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    locked = (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY)
    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if exc.err_code in locked:
            raise ParseProblem("pdf_encrypted", "encrypted PDF: it needs a password to open") from None
        raise ParseProblem("pdf_corrupt", f"not a readable PDF ({exc})") from None
    try:
        n = len(pdf)
        if n > max_pages:
            raise ParseProblem("pdf_too_many_pages", f"{n} pages, more than --max-pdf-pages {max_pages}")
        pages, total = [], 0
        for i in range(n):
            pages.append(_page_text(pdf, i))
            total += len(pages[-1])
            if total > max_chars:
                raise ParseProblem("document_too_large", f"text longer than {max_chars} characters by page {i + 1}")
        outline = []
        for mark in pdf.get_toc():
            dest = mark.get_dest()
            index = dest.get_index() if dest is not None else None
            if index is not None and 0 <= index < n:
                outline.append((index, mark.get_title()))
        return pages, outline
    finally:
        pdf.close()


def _page_text(pdf: "pdfium.PdfDocument", i: int) -> str:
    import pypdfium2 as pdfium

    try:
        page = pdf[i]
    except pdfium.PdfiumError as exc:
        raise ParseProblem("pdf_corrupt", f"page {i + 1} cannot be read ({exc})") from None
    textpage = page.get_textpage()
    try:
        # PDFium ends lines with \r\n; docbeam's offsets count one character per line break.
        return textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
    finally:
        textpage.close()
        page.close()
