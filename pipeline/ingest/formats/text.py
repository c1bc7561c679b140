"""Plain text (.txt, or text with another name): the whole file is one document, its path the
id. Layout lines leave its text as a PDF's do (text_layout.py: a man page's header and footer,
the running headers of text paged with form feeds), counted in the provenance."""

from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Provenance
from docbeam.pipeline.ingest.fields import Record, document
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import read_text
from docbeam.pipeline.ingest.sandbox import Sandbox
from docbeam.pipeline.ingest.text_layout import clean_text


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    text = read_text(path, f, cfg.max_doc_bytes)
    if not isinstance(text, str):
        yield text
        return
    clean = clean_text(text)
    yield document(path, 0, path, clean.text, Provenance(format="text", running_lines=clean.running))
