"""Bytes of one input file -> Documents and Rejections. Pure: no Beam here.

Format by extension: .jsonl / .jsonl.gz / .json.gz, .parquet, .txt, .md, .html / .htm.
Every problem becomes a Rejection naming the file, the row where there is one, and what is
wrong; the good records of the same file still come out. Nothing is read unbounded: a
document over `max_doc_bytes` and a decompressed stream over `max_decompressed_bytes`
(gzip bombs) are rejected, never loaded whole.
"""

import io
import json
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.documents import Document, Rejection

STAGE = "parse"
Record = Document | Rejection


@dataclass(frozen=True)
class ParseConfig:
    id_field: str = "id"
    text_field: str = "text"
    max_doc_bytes: int = 64 << 20
    max_decompressed_bytes: int = 4 << 30


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


def parse_file(path: str, open_file: Callable[[], BinaryIO], cfg: ParseConfig = ParseConfig()) -> Iterator[Record]:
    fmt = format_of(path)
    if fmt is None:
        known = ", ".join(sorted(FORMATS))
        yield Rejection(path, None, STAGE, "unsupported_format", f"{path}: unknown extension; docbeam reads {known}")
        return
    parser = {"jsonl": _jsonl, "parquet": _parquet, "text": _text, "html": _html}[fmt]
    try:
        with open_file() as f:
            yield from parser(path, f, cfg)
    except OSError as exc:  # unreadable file (permissions, vanished object): the file is rejected
        yield Rejection(path, None, STAGE, "unreadable", f"{path}: {exc}")


# -- helpers ---------------------------------------------------------------------------------


def _doc(path: str, row: int, doc_id: str | None, text: str, metadata: dict | None = None) -> Record:
    if not text.strip():
        return Rejection(path, doc_id, STAGE, "empty_text", f"{path} row {row}: text is empty or only whitespace", row)
    return Document(f"{path}#{row}", doc_id or f"{path}#{row}", path, row, text, metadata or {})


def _decode(path: str, data: bytes, row: int | None, doc_id: str | None) -> str | Rejection:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"row {row}, " if row is not None else ""
        return Rejection(
            path,
            doc_id,
            STAGE,
            "invalid_utf8",
            f"{path}: {where}invalid UTF-8 at byte {exc.start} ({data[exc.start : exc.start + 4]!r})",
            row,
        )
    if _looks_binary(text):
        return Rejection(
            path,
            doc_id,
            STAGE,
            "binary_content",
            f"{path}: looks like binary data, not text (NUL or many control characters)",
            row,
        )
    return text


def _looks_binary(text: str, sample: int = 8192) -> bool:
    head = text[:sample]
    if "\x00" in head:
        return True
    control = sum(1 for ch in head if ord(ch) < 32 and ch not in "\t\n\r\f\v")
    return len(head) > 0 and control / len(head) > 0.1


class _Decompressed(io.RawIOBase):
    """Streaming gunzip (multi-member) that stops at a size cap and never raises mid-read.

    A truncated stream or a gzip bomb ends the stream early and sets `problem`, so every
    line decoded before the break is still delivered.
    """

    def __init__(self, raw: BinaryIO, gzipped: bool, cap: int):
        self.raw, self.gzipped, self.cap = raw, gzipped, cap
        self.total = 0
        self.problem: str | None = None
        self._d = zlib.decompressobj(31)
        self._buf = b""
        self._pending = b""

    def readable(self) -> bool:
        return True

    def _fill(self) -> None:
        while not self._buf:
            if not self.gzipped:
                self._buf = self.raw.read(1 << 16)
                return
            if self._d.eof:  # end of one gzip member: another may follow
                rest = self._d.unused_data or self.raw.read(1 << 16)
                if not rest:
                    return
                self._d, self._pending = zlib.decompressobj(31), rest
                continue
            src = self._d.unconsumed_tail or self._pending or self.raw.read(1 << 16)
            self._pending = b""
            if not src:
                self.problem = "compressed stream ends before its end-of-stream marker (truncated)"
                return
            try:
                self._buf = self._d.decompress(src, 1 << 16)  # bounded output per step: bombs stay small
            except zlib.error as exc:
                self.problem = f"corrupt compressed data ({exc})"
                return

    def readinto(self, b) -> int:
        if self.problem:
            return 0
        self._fill()
        n = min(len(b), len(self._buf))
        if self.total + n > self.cap:
            self.problem = f"decompressed size passed {self.cap} bytes (gzip bomb?)"
            return 0
        b[:n], self._buf = self._buf[:n], self._buf[n:]
        self.total += n
        return n


# -- formats ---------------------------------------------------------------------------------


def _jsonl(path: str, f: BinaryIO, cfg: ParseConfig) -> Iterator[Record]:
    gzipped = path.lower().endswith(".gz")
    # The size cap is for what decompression produces; a plain file is as big as it is.
    source = _Decompressed(f, gzipped, cfg.max_decompressed_bytes if gzipped else float("inf"))
    stream = io.BufferedReader(source, buffer_size=1 << 20)
    row, seen_any = -1, False
    while line := stream.readline(cfg.max_doc_bytes + 1):
        if source.problem and not line.endswith(b"\n"):
            break  # the line the stream broke in is part of the damage, not a record
        row += 1
        if len(line) > cfg.max_doc_bytes and not line.endswith(b"\n"):
            while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass  # skip the rest of the oversized line without holding it
            if source.problem:
                break  # the stream broke (or hit the cap) inside this line: reported below
            yield Rejection(
                path,
                None,
                STAGE,
                "document_too_large",
                f"{path} row {row}: line longer than {cfg.max_doc_bytes} bytes",
                row,
            )
            seen_any = True
            continue
        if not line.strip():
            continue
        seen_any = True
        yield _json_record(path, row, line, cfg)
    if source.problem:
        kind = "decompressed_too_large" if "passed" in source.problem else "truncated_gzip"
        yield Rejection(
            path,
            None,
            STAGE,
            kind,
            f"{path}: {source.problem} after row {row}; the rest of the file is not read",
            row + 1,
        )
    elif not seen_any:
        yield Rejection(path, None, STAGE, "empty_file", f"{path}: no records (empty file)")


def _json_record(path: str, row: int, line: bytes, cfg: ParseConfig) -> Record:
    text = _decode(path, line, row, None)
    if isinstance(text, Rejection):
        return text
    try:
        obj = json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        return Rejection(path, None, STAGE, "invalid_json", f"{path} row {row}: {exc.msg} at column {exc.colno}", row)
    except RecursionError:
        return Rejection(path, None, STAGE, "invalid_json", f"{path} row {row}: JSON nested too deeply", row)
    if not isinstance(obj, dict):
        return Rejection(
            path,
            None,
            STAGE,
            "not_an_object",
            f"{path} row {row}: expected a JSON object, got {type(obj).__name__}",
            row,
        )
    return _record_from_fields(path, row, obj, cfg)


def _record_from_fields(path: str, row: int, obj: dict, cfg: ParseConfig) -> Record:
    doc_id = obj.get(cfg.id_field)
    if doc_id is not None:
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            return Rejection(
                path,
                None,
                STAGE,
                "bad_id",
                f"{path} row {row}: field {cfg.id_field!r} must be a string or integer, got {type(doc_id).__name__}",
                row,
            )
        doc_id = str(doc_id)
    if cfg.text_field not in obj or obj[cfg.text_field] is None:
        return Rejection(path, doc_id, STAGE, "missing_text", f"{path} row {row}: no {cfg.text_field!r} field", row)
    text = obj[cfg.text_field]
    if not isinstance(text, str):
        return Rejection(
            path,
            doc_id,
            STAGE,
            "text_not_string",
            f"{path} row {row}: field {cfg.text_field!r} is {type(text).__name__}, not a string",
            row,
        )
    if len(text) > cfg.max_doc_bytes:
        return Rejection(
            path,
            doc_id,
            STAGE,
            "document_too_large",
            f"{path} row {row}: text longer than {cfg.max_doc_bytes} characters",
            row,
        )
    meta = {k: v for k, v in obj.items() if k not in (cfg.id_field, cfg.text_field)}
    return _doc(path, row, doc_id, text, meta)


def _parquet(path: str, f: BinaryIO, cfg: ParseConfig) -> Iterator[Record]:
    try:
        pf = pq.ParquetFile(f)
    except (pa.ArrowInvalid, OSError) as exc:
        yield Rejection(path, None, STAGE, "invalid_parquet", f"{path}: not a readable Parquet file: {exc}")
        return
    schema = pf.schema_arrow
    field = schema.field(cfg.text_field) if cfg.text_field in schema.names else None
    if field is None or not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
        found = ", ".join(f"{f.name}: {f.type}" for f in schema)
        yield Rejection(
            path, None, STAGE, "wrong_schema", f"{path}: needs a string column {cfg.text_field!r}; found {found}"
        )
        return
    if pf.metadata.num_rows == 0:
        yield Rejection(path, None, STAGE, "empty_file", f"{path}: no rows")
        return
    row = 0
    for batch in pf.iter_batches(batch_size=1024):
        for obj in batch.to_pylist():
            yield _record_from_fields(path, row, obj, cfg)
            row += 1


def _read_capped(path: str, f: BinaryIO, cfg: ParseConfig) -> bytes | Rejection:
    data = f.read(cfg.max_doc_bytes + 1)
    if len(data) > cfg.max_doc_bytes:
        return Rejection(path, None, STAGE, "document_too_large", f"{path}: larger than {cfg.max_doc_bytes} bytes", 0)
    if not data:
        return Rejection(path, None, STAGE, "empty_file", f"{path}: empty file", 0)
    return data


def _text(path: str, f: BinaryIO, cfg: ParseConfig) -> Iterator[Record]:
    data = _read_capped(path, f, cfg)
    text = data if isinstance(data, Rejection) else _decode(path, data, 0, path)
    yield text if isinstance(text, Rejection) else _doc(path, 0, path, text)


def _html(path: str, f: BinaryIO, cfg: ParseConfig) -> Iterator[Record]:
    data = _read_capped(path, f, cfg)
    markup = data if isinstance(data, Rejection) else _decode(path, data, 0, path)
    if isinstance(markup, Rejection):
        yield markup
        return
    yield _doc(path, 0, path, visible_text(markup))


class _VisibleText(HTMLParser):
    """Collects text a reader would see. Event-driven, so deep nesting costs no recursion."""

    HIDDEN = {"script", "style", "noscript", "template", "title", "svg", "iframe", "object"}
    BLOCK = {
        "p",
        "div",
        "br",
        "li",
        "tr",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "section",
        "article",
        "header",
        "footer",
        "pre",
        "blockquote",
        "table",
        "ul",
        "ol",
        "td",
        "th",
    }

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden_depth += 1
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_startendtag(self, tag, attrs):
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.hidden_depth:
            self.parts.append(data)


def visible_text(markup: str) -> str:
    parser = _VisibleText()
    parser.feed(markup)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)
