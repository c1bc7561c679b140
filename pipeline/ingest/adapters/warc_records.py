"""WARC records, streaming, through warcio: never the whole file, one record at a time.

Runs in the worker, not the sandbox: warcio is pure Python, so a hostile file can raise
but not crash the process, and the stream is too long to ship to a child. What could hang
the worker is bounded here instead: warcio's own line reader concatenates a long line piece
by piece (quadratic: a 32 MiB header line took 35 s), so warcio reads through `_Lines`, whose
lines are linear to read and at most LINE_CAP bytes. `_Lines` also counts the record
headers it passes, so a record whose Content-Length swallows the next record says so.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from warcio.archiveiterator import WARCIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.recordloader import ArcWarcRecord

from docbeam.pipeline.ingest.sandbox import ParseProblem


@dataclass
class WarcRecord:
    kind: str  # WARC-Type: response, request, warcinfo, metadata, revisit, resource, ...
    uri: str | None  # WARC-Target-URI
    date: str | None  # WARC-Date (ISO 8601, UTC)
    status: int | None  # HTTP status of a response record
    content_type: str | None  # HTTP Content-Type, parameters included
    _record: ArcWarcRecord
    _lines: "_Lines"

    def payload(self, cap: int) -> bytes | None:
        """The HTTP body (transfer and content encodings undone), or None when it is longer than `cap`."""
        try:
            data = self._record.content_stream().read(cap + 1)
        except OSError:
            raise
        except Exception as exc:  # a broken chunked or gzip body: this record only
            raise ParseProblem("warc_corrupt", f"unreadable HTTP body ({type(exc).__name__}: {exc})") from None
        return data if len(data) <= cap else None

    def complete(self) -> bool:
        """Whether the record's block was all there: read the rest, then compare with its Content-Length."""
        raw = self._record.raw_stream
        while raw.read(1 << 16):
            pass
        return getattr(raw, "limit", 0) == 0

    def swallowed(self) -> int:
        """After complete(): how many further record headers its block held (a Content-Length
        that covers the records after it); they are not read as records. Ask once per record."""
        lines = self._lines
        found = max(0, lines.headers - lines.accounted)
        lines.accounted += found
        return found


LINE_CAP = 1 << 20  # a WARC or HTTP header line; real ones are under 8 KiB
SEPARATED = b"\r\n\r\nWARC/1."  # where a record starts: after the blank line that ends the one before


class _Lines(DecompressingBufferedReader):
    """warcio's reader with a linear, capped readline, counting the record headers in what
    it hands out (in order: it is the only way warcio reads the stream)."""

    def __init__(self, stream: BinaryIO):
        super().__init__(stream, decomp_type=None)  # the stream is already gunzipped, with a cap
        self.headers = 0  # record headers seen
        self.accounted = 0  # of which: those of records read, and those reported swallowed
        self._tail = b"\r\n\r\n"  # as if a record had just ended: the first header counts too

    def _seen(self, data: bytes) -> bytes:
        window = self._tail + data
        self.headers += window.count(SEPARATED)  # the tail is shorter than the pattern: never counted twice
        self._tail = window[-(len(SEPARATED) - 1) :]
        return data

    def read(self, length=None) -> bytes:
        return self._seen(super().read(length))

    def readline(self, length=None) -> bytes:
        limit = LINE_CAP + 1 if length is None else min(length, LINE_CAP + 1)
        parts, size = [], 0
        while size < limit:
            self._fillbuff()
            if self.empty():
                break
            part = self.buff.readline(limit - size)
            parts.append(part)
            size += len(part)
            if part.endswith(b"\n"):
                break
        line = b"".join(parts)
        if len(line) > LINE_CAP and not line.endswith(b"\n"):
            raise ParseProblem("warc_corrupt", f"a header line longer than {LINE_CAP} bytes")
        return self._seen(line)


def records(stream: BinaryIO) -> Iterator[WarcRecord]:
    """Every record in order. A stream that stops being WARC raises ParseProblem(warc_corrupt):
    after that there is no telling where the next record starts."""
    archive = WARCIterator(stream)  # WARC only: warcio would read any text as ARC records
    archive.reader = lines = _Lines(archive.fh)  # before the first record: nothing read yet
    it = iter(archive)
    while True:
        try:
            rec = next(it)
        except StopIteration:
            return
        except (OSError, ParseProblem):  # the storage failed, not the format; or a line past the cap
            raise
        except Exception as exc:  # warcio fails in many ways on a damaged stream (ArchiveLoadFailed and others)
            raise ParseProblem("warc_corrupt", f"not a readable WARC record ({type(exc).__name__}: {exc})") from None
        http = rec.http_headers if rec.rec_type in ("response", "revisit") else None
        status = http.get_statuscode() if http is not None else None
        lines.accounted += 1  # its own header
        yield WarcRecord(
            kind=rec.rec_type,
            uri=rec.rec_headers.get_header("WARC-Target-URI"),
            date=rec.rec_headers.get_header("WARC-Date"),
            status=int(status) if status and status.isdigit() else None,
            content_type=http.get_header("Content-Type") if http is not None else None,
            _record=rec,
            _lines=lines,
        )
