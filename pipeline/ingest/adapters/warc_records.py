"""WARC records, streaming, through warcio: never the whole file, one record at a time.

Runs in the worker, not the sandbox: warcio is pure Python, so a hostile file can raise
but not crash the process, and the stream is too long to ship to a child.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from warcio.archiveiterator import WARCIterator
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


def records(stream: BinaryIO) -> Iterator[WarcRecord]:
    """Every record in order. A stream that stops being WARC raises ParseProblem(warc_corrupt):
    after that there is no telling where the next record starts."""
    it = iter(WARCIterator(stream))  # WARC only: warcio would read any text as ARC records
    while True:
        try:
            rec = next(it)
        except StopIteration:
            return
        except OSError:  # the storage failed, not the format
            raise
        except Exception as exc:  # warcio fails in many ways on a damaged stream (ArchiveLoadFailed and others)
            raise ParseProblem("warc_corrupt", f"not a readable WARC record ({type(exc).__name__}: {exc})") from None
        http = rec.http_headers if rec.rec_type in ("response", "revisit") else None
        status = http.get_statuscode() if http is not None else None
        yield WarcRecord(
            kind=rec.rec_type,
            uri=rec.rec_headers.get_header("WARC-Target-URI"),
            date=rec.rec_headers.get_header("WARC-Date"),
            status=int(status) if status and status.isdigit() else None,
            content_type=http.get_header("Content-Type") if http is not None else None,
            _record=rec,
        )
