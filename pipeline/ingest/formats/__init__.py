"""One module per input format, each with a `parse` that is a FormatParser; PARSERS names them
all, and parse.py reads a file through `PARSERS[fmt]`.

Importing them all is cheap: no format module loads its third-party parsing library when it
is imported. The sandboxed adapters (PDFium, python-docx, trafilatura) import theirs inside
their functions, which run in the sandbox's child only; warcio loads at the first WARC file."""

from collections.abc import Iterator
from typing import BinaryIO, Protocol

from docbeam.pipeline.core.records import Skipped
from docbeam.pipeline.ingest.fields import Record
from docbeam.pipeline.ingest.formats import csv, docx, html, jsonl, markdown, parquet, pdf, text, warc
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.sandbox import Sandbox


class FormatParser(Protocol):
    """What each format's `parse` is."""

    def __call__(self, path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record | Skipped]:
        """Every Document, Rejection and Skipped record of the file at `path`, in order. `f` is
        the open file, at its start (seekable where the storage allows); `sandbox` runs native
        parsers in a child process (formats that need none ignore it). A problem is a
        Rejection naming the file (and the row where there is one), never an exception; the
        good records of the same file still come out. OSError (storage) may propagate."""
        ...


# format -> its parser; parse.FORMATS maps extensions to these names
PARSERS: dict[str, FormatParser] = {
    "jsonl": jsonl.parse,
    "parquet": parquet.parse,
    "csv": csv.parse,
    "text": text.parse,
    "markdown": markdown.parse,
    "html": html.parse,
    "pdf": pdf.parse,
    "docx": docx.parse,
    "warc": warc.parse,
}

__all__ = ["PARSERS", "FormatParser"]
