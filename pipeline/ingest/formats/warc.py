"""Web archives (.warc, .warc.gz): every HTML response record with HTTP status 200 is a
document (id: its target URI; provenance: the URI and WARC-Date), its text chosen by
--html-text as for .html files; every other record is Skipped with its reason and counted.

Read streaming, one record at a time: gzip through the capped Decompressed reader (so a
truncated file or a gzip bomb ends in one error line, the records before it kept), records
through warcio. A record cut short is damage, never half a document.
"""

import datetime as dt
import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, BinaryIO

from docbeam.pipeline.core.records import Rejection, Skipped, reject
from docbeam.pipeline.ingest.fields import STAGE, Record
from docbeam.pipeline.ingest.formats.html import page
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import Decompressed, decode_markup
from docbeam.pipeline.ingest.sandbox import ParseProblem, Sandbox

if TYPE_CHECKING:
    from docbeam.pipeline.ingest.adapters.warc_records import WarcRecord

HTML_TYPES = ("text/html", "application/xhtml+xml")


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record | Skipped]:
    # Here, not at the top: formats.PARSERS imports every format with parse.py, and warcio
    # loads at the first WARC file only.
    from docbeam.pipeline.ingest.adapters.warc_records import records

    source = Decompressed.sniffing(f, cfg.max_decompressed_bytes)
    row = 0  # records read whole so far: the next record's index
    swallowed = 0  # record headers inside the block of the record read last
    try:
        for rec in records(io.BufferedReader(source, buffer_size=1 << 20)):
            kept = _keep(path, row, rec, cfg)
            if not rec.complete():  # cut short: by the file's end, a broken gzip stream or the size cap
                swallowed = rec.swallowed()
                break
            if swallowed := rec.swallowed():
                # Its Content-Length covers the records after it: they are inside its block,
                # not read; the record itself is not one page. One error line counts them.
                problem = f"its Content-Length covers the next {swallowed} record(s), which are not read"
                yield reject(STAGE, "warc_corrupt", path, f"record {row}: {problem}", row=row, doc_id=rec.uri)
            elif isinstance(kept, str):  # the page's markup: parse it
                yield page(path, row, rec.uri, kept, cfg, sandbox, url=rec.uri, crawl_date=utc(rec.date))
            else:
                yield kept
            row += 1
        else:
            if not source.problem:
                if row == 0:
                    yield reject(STAGE, "empty_file", path, "no WARC records (empty file)")
                return
    except ParseProblem as p:
        if not source.problem:  # otherwise the stream's end explains the unreadable record
            yield reject(STAGE, p.code, path, f"{p.message}; the rest of the file is not read", row=row)
            return
    yield _damage(path, row, source, swallowed)


def _keep(path: str, row: int, rec: "WarcRecord", cfg: ParseConfig) -> str | Rejection | Skipped:
    """The markup of a record that is a web page, else why it is not a document."""
    if rec.kind != "response":
        return Skipped(source=path, row=row, reason="not_response")
    if rec.status != 200:
        return Skipped(source=path, row=row, reason="not_200")
    if (rec.content_type or "").split(";")[0].strip().lower() not in HTML_TYPES:
        return Skipped(source=path, row=row, reason="not_html")
    try:
        data = rec.payload(cfg.max_doc_bytes)
    except ParseProblem as p:
        return reject(STAGE, p.code, path, p.message, row=row, doc_id=rec.uri)
    if data is None:
        problem = f"larger than {cfg.max_doc_bytes} bytes"
        return reject(STAGE, "document_too_large", path, problem, row=row, doc_id=rec.uri)
    return decode_markup(path, data, row, rec.uri, declared=charset(rec.content_type))


def _damage(path: str, row: int, source: Decompressed, swallowed: int = 0) -> Rejection:
    """The one error line for a file that breaks off at record `row` (`swallowed`: the record
    headers inside the part of it that was read)."""
    if source.problem:
        kind, problem = source.error, source.problem
    elif swallowed:  # a Content-Length past the end, running over whole records
        kind = "warc_corrupt"
        problem = f"its Content-Length runs past the end of the file, over {swallowed} more record(s), not read"
    else:
        kind, problem = "warc_corrupt", "the record ends before its Content-Length (truncated file)"
    message = f"{path} record {row}: {problem}; the rest of the file is not read"
    return Rejection(source=path, doc_id=None, stage=STAGE, error=kind, message=message, row=row)


def charset(content_type: str | None) -> str | None:
    """The charset parameter of an HTTP Content-Type."""
    for param in (content_type or "").split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def utc(value: str | None) -> str | None:
    """A WARC-Date as ISO 8601 UTC, or None when it is missing or not a full date-time."""
    try:
        when = dt.datetime.fromisoformat(value or "")
    except ValueError:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=dt.UTC)).astimezone(dt.UTC).isoformat()
