"""CSV and TSV (.csv, .tsv, gzipped as .csv.gz / .tsv.gz): a header row, then one document
per row, like Parquet: the --text-field and --id-field columns, the other columns as
metadata (strings). Read streaming; a bad row is one rejection and the next row still reads.
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

Row = tuple[int, list[str] | csv.Error]  # (line number where the row ends, its fields or why it has none)


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    fmt = "tsv" if path.lower().removesuffix(".gz").endswith(".tsv") else "csv"
    source = Decompressed.sniffing(f, cfg.max_decompressed_bytes)
    # surrogateescape: a byte that is not UTF-8 rejects its own row, not the rest of the file
    text = io.TextIOWrapper(io.BufferedReader(source, 1 << 20), "utf-8-sig", "surrogateescape", newline="")
    csv.field_size_limit(cfg.max_doc_bytes)  # a longer field is a csv.Error for its row, never held whole
    rows = _rows(csv.reader(text, delimiter="\t" if fmt == "tsv" else ","))
    _, header = next(rows, (0, None))
    if header is None or isinstance(header, csv.Error) or cfg.text_field not in header:
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


def _rows(reader) -> Iterator[Row]:
    while True:
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # the reader goes on at the next line
            fields = exc
        yield reader.line_num, fields


def _record(path: str, row: int, item: Row, header: list[str], cfg: ParseConfig, fmt: str) -> Record:
    line, fields = item
    if isinstance(fields, csv.Error):
        return reject(STAGE, "csv_bad_row", path, f"line {line}: {fields}", row=row)
    if len(fields) != len(header):
        problem = f"line {line}: {len(fields)} fields where the header has {len(header)}"
        return reject(STAGE, "wrong_field_count", path, problem, row=row)
    try:
        "".join(fields).encode("utf-8")
    except UnicodeEncodeError:
        return reject(STAGE, "invalid_utf8", path, f"line {line}: bytes that are not UTF-8", row=row)
    return from_fields(path, row, dict(zip(header, fields)), cfg, fmt)


def _bad_header(path: str, header: list[str] | csv.Error | None, source: Decompressed, cfg: ParseConfig) -> Rejection:
    if source.problem:
        return reject(STAGE, source.error, path, source.problem)
    if not header:
        return reject(STAGE, "empty_file", path, "empty file (no header row)")
    if isinstance(header, csv.Error):
        return reject(STAGE, "csv_bad_row", path, f"unreadable header row: {header}")
    return reject(STAGE, "wrong_schema", path, f"needs a column {cfg.text_field!r}; the header has {header}")
