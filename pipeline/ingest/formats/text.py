"""Plain text and Markdown (.txt, .md): the whole file is one document, its path the id."""

from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Provenance
from docbeam.pipeline.ingest.fields import Record, document
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import decode, read_capped
from docbeam.pipeline.ingest.sandbox import Sandbox


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    data = read_capped(path, f, cfg.max_doc_bytes)
    text = data if not isinstance(data, bytes) else decode(path, data, 0, path)
    fmt = "markdown" if path.lower().endswith(".md") else "text"
    yield text if not isinstance(text, str) else document(path, 0, path, text, Provenance(format=fmt))
