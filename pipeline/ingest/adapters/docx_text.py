"""Word (.docx) -> paragraphs and tables in document order, through python-docx.

Runs in the sandbox only. python-docx and lxml are imported inside `extract`: the worker
imports this module to name `extract` to the sandbox, and need not load them (the sandbox's
child preloads them, sandbox.PRELOAD)."""

import io
import zipfile

from docbeam.pipeline.ingest.sandbox import ParseProblem

BODY = "word/document.xml"


def extract(data: bytes, max_unzipped: int) -> list[tuple[str, bool]]:
    """[(text, is_heading)] per non-empty block in document order: a paragraph, or a table
    as one block (a line per row, cells joined by " | ")."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table
    from lxml.etree import XMLSyntaxError

    try:
        names = {i.filename: i.file_size for i in zipfile.ZipFile(io.BytesIO(data)).infolist()}
    except zipfile.BadZipFile as exc:
        raise ParseProblem("docx_corrupt", f"not a readable .docx (zip: {exc})") from None
    if BODY not in names:
        raise ParseProblem("docx_corrupt", f"a zip without {BODY}: not a Word document")
    if sum(names.values()) > max_unzipped:
        raise ParseProblem(
            "decompressed_too_large", f"unzips to {sum(names.values())} bytes, more than {max_unzipped} (zip bomb?)"
        )
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, XMLSyntaxError, zipfile.BadZipFile) as exc:
        raise ParseProblem("docx_corrupt", f"not a readable .docx ({type(exc).__name__}: {exc})") from None
    blocks = []
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            text = "\n".join(" | ".join(cell.text.strip() for cell in row.cells) for row in item.rows)
            heading = False
        else:
            text = item.text
            style = item.style.name if item.style is not None else ""
            heading = style == "Title" or style.startswith("Heading")
        if text.strip():
            blocks.append((text.strip(), heading))
    return blocks
