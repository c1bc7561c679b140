"""Bytes of one input file -> Documents and Rejections. Pure: no Beam here.

The format comes from the extension (formats/ holds one module per format). Every problem
becomes a Rejection naming the file, the row where there is one, and what is wrong; the good
records of the same file still come out. Nothing is read unbounded: a document over
`max_doc_bytes` and a decompressed stream over `max_decompressed_bytes` (gzip bombs) are
rejected, never loaded whole.
"""

import dataclasses
import importlib
from collections.abc import Callable, Iterator
from typing import BinaryIO

from pipeline.core.records import reject
from pipeline.ingest.config import ParseConfig
from pipeline.ingest.fields import STAGE, Record
from pipeline.ingest.sources import relabel

# extension -> format module under pipeline.ingest.formats
FORMATS = {
    ".jsonl": "jsonl",
    ".jsonl.gz": "jsonl",
    ".json.gz": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".txt": "text",
    ".md": "text",
    ".html": "html",
    ".htm": "html",
}


def format_of(path: str) -> str | None:
    lower = path.lower()
    for ext in sorted(FORMATS, key=len, reverse=True):
        if lower.endswith(ext):
            return FORMATS[ext]
    return None


def parse_file(
    path: str, open_file: Callable[[], BinaryIO], cfg: ParseConfig | None = None, name: str | None = None
) -> Iterator[Record]:
    """The file's Documents and Rejections. With `name` (the file relative to its input's
    root, see sources.py), ids derived from the path are derived from the name instead."""
    cfg = cfg or ParseConfig()
    records = _parse(path, open_file, cfg)
    if name is None or name == path:
        yield from records
        return
    for rec in records:
        new = relabel(rec.doc_id, path, name)
        yield rec if new == rec.doc_id else dataclasses.replace(rec, doc_id=new)


def _parse(path: str, open_file: Callable[[], BinaryIO], cfg: ParseConfig) -> Iterator[Record]:
    fmt = format_of(path)
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        yield reject(STAGE, "unsupported_format", path, f"unknown extension; docbeam reads {known}")
        return
    parser = importlib.import_module(f"pipeline.ingest.formats.{fmt}").parse
    try:
        with open_file() as f:
            yield from parser(path, f, cfg)
    except OSError as exc:  # unreadable file (permissions, vanished object): the file is rejected
        yield reject(STAGE, "unreadable", path, str(exc))
