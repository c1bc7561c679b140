"""Bytes of one input file -> Documents, Rejections and Skipped records. Pure: no Beam here.

The content decides the format (detect.py): bytes with a format's signature are read as that
format whatever the name; text without a signature is read as the extension says when that
format reads text (JSON lines, CSV, HTML, Markdown) and as plain text otherwise (a text file
named .docx or .pdf, or with no extension); the extension alone decides only for bytes that
give nothing away. formats/ holds one module per format, formats.PARSERS their table. Every
problem becomes a Rejection naming the file, the row where there is one, and what is wrong;
the good records of the same file still come out. Nothing is read unbounded: a document over `max_doc_bytes` and a
decompressed stream over `max_decompressed_bytes` (gzip bombs) are rejected, never loaded
whole. Formats that run native code or parsers that are not linear (PDF, Word, HTML) parse in
a Sandbox: bounded in time and memory, and a crash costs one error line, not the worker. The
rest read their input in bounded pieces (lines, WARC header lines, Parquet cells).
"""

import contextlib
import dataclasses
import io
from collections.abc import Callable, Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Document, Rejection, Skipped, reject
from docbeam.pipeline.ingest import detect, scalar_values
from docbeam.pipeline.ingest.fields import STAGE, Record
from docbeam.pipeline.ingest.formats import PARSERS
from docbeam.pipeline.ingest.language_id import language_of
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.sandbox import Sandbox
from docbeam.pipeline.ingest.sources import left_out, relabel

# extension -> format: a key of formats.PARSERS
FORMATS = {
    ".jsonl": "jsonl",
    ".jsonl.gz": "jsonl",
    ".json.gz": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
    ".txt": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
    ".warc": "warc",
    ".warc.gz": "warc",
    ".csv": "csv",
    ".csv.gz": "csv",
    ".tsv": "csv",
    ".tsv.gz": "csv",
}
# Content of a kind docbeam does not read that a claimed format still takes (its parser
# then says precisely what is wrong): gzip for the compressed formats, a zip for .docx.
CONTAINERS = {("jsonl", "gzip"), ("csv", "gzip"), ("warc", "gzip"), ("docx", "zip")}
READABLE = frozenset(FORMATS.values())
# Formats whose files always begin with their signature: text that lacks it is not one of them.
SIGNED = frozenset({"pdf", "docx", "parquet", "warc"})


def format_of(path: str) -> str | None:
    lower = path.lower()
    for ext in sorted(FORMATS, key=len, reverse=True):
        if lower.endswith(ext):
            return FORMATS[ext]
    return None


def parse_file(
    path: str,
    open_file: Callable[[], BinaryIO],
    cfg: ParseConfig | None = None,
    name: str | None = None,
    sandbox: Sandbox | None = None,
) -> Iterator[Record | Skipped]:
    """The file's Documents, Rejections and Skipped records. With `name` (the file relative
    to its input's root, see sources.py), ids derived from the path are derived from the name
    instead. `sandbox` runs the native parsers (one per thread; without one, a sandbox is
    started for this file alone). A file whose link leaves its input's root (unless
    `cfg.follow_links`), a folder link that does, and a FIFO, socket or device are skipped,
    unread (sources.left_out). Each Document's `language` is `cfg.language`, or with `auto` the
    language detected in its text (language_id.py), here in the worker process: not in the
    sandbox, whose child would load the detector's model once more."""
    cfg = cfg or ParseConfig()
    if reason := left_out(path, name, cfg.follow_links):
        yield Skipped(source=path, row=0, reason=reason)
        return
    with contextlib.ExitStack() as stack:
        if sandbox is None:
            sandbox = stack.enter_context(Sandbox(cfg.parse_timeout_s, cfg.parse_memory_mb))
        for raw in _parse(path, open_file, cfg, sandbox):
            rec = scalar_values.checked(raw)  # invalid Unicode: the record's problem, never the run's
            if name is not None and name != path and not isinstance(rec, Skipped) and rec.doc_id:
                if (new := relabel(rec.doc_id, path, name)) != rec.doc_id:
                    rec = dataclasses.replace(rec, doc_id=new)
            if isinstance(rec, Document):  # every format's documents pass here: the one place
                rec = dataclasses.replace(rec, language=language_of(cfg.language, rec.text))
            yield rec


def _parse(
    path: str, open_file: Callable[[], BinaryIO], cfg: ParseConfig, sandbox: Sandbox
) -> Iterator[Record | Skipped]:
    try:
        with contextlib.ExitStack() as files:
            f = files.enter_context(open_file())
            fmt = _choose(path, format_of(path), detect.sniff(f))
            if isinstance(fmt, Rejection):
                yield fmt
                return
            if not _rewind(f):
                f = files.enter_context(open_file())
            yield from PARSERS[fmt](path, f, cfg, sandbox)
    except OSError as exc:  # unreadable file (permissions, vanished object): the file is rejected
        yield reject(STAGE, "unreadable", path, str(exc))


def _rewind(f: BinaryIO) -> bool:
    try:
        f.seek(0)
        return True
    except (OSError, io.UnsupportedOperation):
        return False


def _choose(path: str, claimed: str | None, kind: str | None) -> str | Rejection:
    """The format to read `path` as: its content's where the content has a signature docbeam
    reads; for text, its extension's where that format reads text, else plain text; else its
    extension's. Content of a kind docbeam does not read is rejected, named."""
    if kind == "text":
        return claimed if claimed is not None and claimed not in SIGNED else "text"
    if kind in READABLE:
        return kind
    if kind is None and claimed is not None:
        return claimed
    if claimed is not None and (claimed, kind) in CONTAINERS:
        return claimed
    if kind is None:
        known = ", ".join(sorted(FORMATS))
        return reject(STAGE, "unsupported_format", path, f"unknown extension; docbeam reads {known}")
    what = f"the content is {detect.describe(kind)}"
    if claimed is None:
        return reject(STAGE, "unsupported_format", path, f"unknown extension, and {what}")
    return reject(STAGE, "format_mismatch", path, f"named as {claimed} but {what}; docbeam does not read it")
