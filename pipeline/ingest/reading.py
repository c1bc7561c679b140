"""Bounded reading shared by the formats: capped reads, UTF-8 decoding with a reason,
binary detection, and streaming gunzip that stops at a size cap. Pure: no Beam here."""

import codecs
import io
import re
import zlib
from typing import BinaryIO

from docbeam.pipeline.core.records import Rejection, reject
from docbeam.pipeline.core.stages import Stage

STAGE = Stage.PARSE


def decode(path: str, data: bytes, row: int | None, doc_id: str | None) -> str | Rejection:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return reject(
            STAGE,
            "invalid_utf8",
            path,
            f"invalid UTF-8 at byte {exc.start} ({data[exc.start : exc.start + 4]!r})",
            row=row,
            doc_id=doc_id,
        )
    return _binary(path, row, doc_id) if looks_binary(text) else text


META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def decode_markup(
    path: str, data: bytes, row: int | None, doc_id: str | None, declared: str | None = None
) -> str | Rejection:
    """HTML bytes -> text in the charset the server declared (`declared`), else the one the
    page's <meta> declares, else UTF-8. A declared charset is trusted, stray bytes becoming
    U+FFFD; undeclared bytes must be UTF-8."""
    found = META_CHARSET.search(data[:4096])
    charset = declared or (found.group(1).decode("ascii") if found else None)
    try:
        codec = codecs.lookup(charset).name if charset else None
    except LookupError:
        codec = None
    if codec is None:
        text = decode(path, data, row, doc_id)
    else:
        text = data.decode(codec, errors="replace")
        text = _binary(path, row, doc_id) if looks_binary(text) else text
    return text.removeprefix("\ufeff") if isinstance(text, str) else text


def _binary(path: str, row: int | None, doc_id: str | None) -> Rejection:
    problem = "looks like binary data, not text (NUL or many control characters)"
    return reject(STAGE, "binary_content", path, problem, row=row, doc_id=doc_id)


# Control characters other than whitespace: text has almost none, binary data many.
_CONTROL = {c: None for c in range(32) if chr(c) not in "\t\n\r\f\v"}


def looks_binary(text: str, sample: int = 8192) -> bool:
    head = text[:sample]
    if "\x00" in head:
        return True
    control = len(head) - len(head.translate(_CONTROL))  # counted in C, not per character in Python
    return len(head) > 0 and control / len(head) > 0.1


def read_capped(path: str, f: BinaryIO, max_bytes: int) -> bytes | Rejection:
    """The whole file (one document, whose id is its path), or a Rejection when it is empty or
    larger than `max_bytes`."""
    data = f.read(max_bytes + 1)
    if len(data) > max_bytes:
        problem = f"larger than {max_bytes} bytes (--max-doc-bytes raises the limit)"
        return reject(STAGE, "document_too_large", path, problem, row=0, doc_id=path)
    if not data:
        return reject(STAGE, "empty_file", path, "empty file", row=0, doc_id=path)
    return data


def read_text(path: str, f: BinaryIO, max_bytes: int) -> str | Rejection:
    """The whole file as UTF-8 text (one document, whose id is its path), or why not."""
    data = read_capped(path, f, max_bytes)
    return data if not isinstance(data, bytes) else decode(path, data, 0, path)


class Decompressed(io.RawIOBase):
    """Streaming gunzip (multi-member) that stops at a size cap and never raises mid-read.

    A truncated stream or a gzip bomb ends the stream early and sets `problem`, so every
    line decoded before the break is still delivered.
    """

    def __init__(self, raw: BinaryIO, gzipped: bool, cap: float):
        self.raw, self.gzipped, self.cap = raw, gzipped, cap
        self.total = 0
        self.problem: str | None = None
        self.error = ""  # the error code that goes with `problem`
        self._d = zlib.decompressobj(31)
        self._buf = b""
        self._pending = b""

    @classmethod
    def sniffing(cls, raw: BinaryIO, cap: float) -> "Decompressed":
        """`raw`'s bytes, gunzipped (at most `cap` of them) when they are gzip, whatever the file is called."""
        head = raw.read(2)
        gzipped = head == b"\x1f\x8b"
        stream = cls(raw, gzipped, cap if gzipped else float("inf"))
        if gzipped:
            stream._pending = head
        else:
            stream._buf = head
        return stream

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
                self._fail("truncated_gzip", "compressed stream ends before its end-of-stream marker (truncated)")
                return
            try:
                self._buf = self._d.decompress(src, 1 << 16)  # bounded output per step: bombs stay small
            except zlib.error as exc:
                self._fail("truncated_gzip", f"corrupt compressed data ({exc})")
                return

    def _fail(self, error: str, problem: str) -> None:
        self.error, self.problem = error, problem

    def readinto(self, b) -> int:
        if self.problem:
            return 0
        self._fill()
        n = min(len(b), len(self._buf))
        if self.total + n > self.cap:
            problem = f"decompressed size passed {self.cap} bytes (gzip bomb? --max-decompressed-bytes raises the cap)"
            self._fail("decompressed_too_large", problem)
            return 0
        b[:n], self._buf = self._buf[:n], self._buf[n:]
        self.total += n
        return n
