"""CSV and TSV (.csv, .tsv, gzipped as .csv.gz / .tsv.gz): a header row, then one document
per row, like Parquet: the --text-field and --id-field columns, the other columns as
metadata (strings). Read streaming; a bad row is one rejection and the next row still reads.

Lines are read at most --max-doc-bytes characters at a time (_Lines): a longer line is
skipped, never held whole. A record that is one such line without a quote ends where the
line ends: one rejection, and reading goes on. Inside a quoted field there is no telling
where the record ends (its lines look like records), so a field too long to read rejects the
rest of the file instead: the inside of a field never becomes documents.
"""

import csv
import io
from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Rejection, reject
from docbeam.pipeline.ingest.fields import STAGE, Record, from_fields
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import Decompressed
from docbeam.pipeline.ingest.sandbox import Sandbox


class _Bad:
    """Why a row has no fields: its error code and the problem in words."""

    def __init__(self, code: str, problem: str):
        self.code, self.problem = code, problem


Row = tuple[int, list[str] | _Bad]  # (line number where the row ends, its fields or why it has none)


class _LongLine(Exception):
    def __init__(self, line: int, quoted: bool):
        self.line, self.quoted = line, quoted


class _Lines:
    """The text's lines, each at most `cap` characters: a longer one is skipped (read in
    pieces, never held) and raises _LongLine, saying whether it held a quote character."""

    def __init__(self, text: io.TextIOBase, cap: int):
        self.text, self.cap, self.number = text, cap, 0  # number: lines handed out or skipped

    def __iter__(self) -> "_Lines":
        return self

    def __next__(self) -> str:
        line = self.text.readline(self.cap + 1)
        if not line:
            raise StopIteration
        self.number += 1
        if len(line) > self.cap and not line.endswith(("\n", "\r")):
            quoted = '"' in line
            while piece := self.text.readline(1 << 20):
                quoted = quoted or '"' in piece
                if piece.endswith(("\n", "\r")):
                    break
            raise _LongLine(self.number, quoted)
        return line


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    fmt = "tsv" if path.lower().removesuffix(".gz").endswith(".tsv") else "csv"
    source = Decompressed.sniffing(f, cfg.max_decompressed_bytes)
    # surrogateescape: a byte that is not UTF-8 rejects its own row, not the rest of the file
    text = io.TextIOWrapper(io.BufferedReader(source, 1 << 20), "utf-8-sig", "surrogateescape", newline="")
    csv.field_size_limit(cfg.max_doc_bytes)  # a longer field is a csv.Error for its row, never held whole
    rows = _rows(_Lines(text, cfg.max_doc_bytes), "\t" if fmt == "tsv" else ",", cfg.max_doc_bytes)
    _, header = next(rows, (0, None))
    if header is None or isinstance(header, _Bad) or cfg.text_field not in header:
        yield _bad_header(path, header, source, cfg)
        return
    # Each row is handed on once the next one has been read: when the stream breaks off,
    # the row it broke in is damage, reported with the break, never half a record.
    row, held = -1, None
    for item in rows:
        if held is not None:
            yield _record(path, row, held, header, cfg, fmt)
        row, held = row + 1, item
    if source.problem:
        at = max(row, 0)
        message = f"{path} row {at}: {source.problem}; this row and the rest of the file are not read"
        yield Rejection(source=path, doc_id=None, stage=STAGE, error=source.error, message=message, row=at)
    elif held is not None:
        yield _record(path, row, held, header, cfg, fmt)
    else:
        yield reject(STAGE, "empty_file", path, "a header but no rows")


def _rows(lines: _Lines, delimiter: str, cap: int) -> Iterator[Row]:
    reader = csv.reader(lines, delimiter=delimiter)
    while True:
        first = lines.number + 1  # the line the next record starts on
        try:
            fields = next(reader)
        except StopIteration:
            return
        except _LongLine as long:
            if long.line == first and not long.quoted:  # a record of one unquoted line: it ends with the line
                yield long.line, _Bad("document_too_large", f"line {long.line} is longer than {cap} characters")
                reader = csv.reader(lines, delimiter=delimiter)  # afresh: nothing of the skipped line
                continue
            problem = f"line {long.line} is longer than {cap} characters, inside a record that may be quoted"
            yield long.line, _Bad("csv_bad_row", _rest(problem))
            return
        except csv.Error as exc:  # a quoted field past the size limit: the record's end is unknown
            yield lines.number, _Bad("csv_bad_row", _rest(f"line {lines.number}: {exc}"))
            return
        yield lines.number, fields


def _rest(problem: str) -> str:
    return f"{problem}; there is no telling where this record ends, so the rest of the file is not read"


def _record(path: str, row: int, item: Row, header: list[str], cfg: ParseConfig, fmt: str) -> Record:
    line, fields = item
    if isinstance(fields, _Bad):
        return reject(STAGE, fields.code, path, fields.problem, row=row)
    if len(fields) != len(header):
        problem = f"line {line}: {len(fields)} fields where the header has {len(header)}"
        return reject(STAGE, "wrong_field_count", path, problem, row=row)
    try:
        "".join(fields).encode("utf-8")
    except UnicodeEncodeError:
        return reject(STAGE, "invalid_utf8", path, f"line {line}: bytes that are not UTF-8", row=row)
    return from_fields(path, row, dict(zip(header, fields)), cfg, fmt)


def _bad_header(path: str, header: list[str] | _Bad | None, source: Decompressed, cfg: ParseConfig) -> Rejection:
    if source.problem:
        return reject(STAGE, source.error, path, source.problem)
    if not header:
        return reject(STAGE, "empty_file", path, "empty file (no header row)")
    if isinstance(header, _Bad):
        return reject(STAGE, "csv_bad_row", path, f"unreadable header row: {header.problem}")
    return reject(STAGE, "wrong_schema", path, f"needs a column {cfg.text_field!r}; the header has {header}")
