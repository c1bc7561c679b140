"""JSON Lines (.jsonl, .ndjson; gzipped as .jsonl.gz / .json.gz): one document per object."""

import io
import json
from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Rejection, reject
from docbeam.pipeline.ingest.fields import STAGE, Record, from_fields
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import Decompressed, decode
from docbeam.pipeline.ingest.sandbox import Sandbox


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    # The size cap is for what decompression produces; a plain file is as big as it is.
    source = Decompressed.sniffing(f, cfg.max_decompressed_bytes)
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
            yield reject(STAGE, "document_too_large", path, f"line longer than {cfg.max_doc_bytes} bytes", row=row)
            seen_any = True
            continue
        if not line.strip():
            continue
        seen_any = True
        yield _record(path, row, line, cfg)
    if source.problem:
        # The rejection names the first row not read; its message, the last row that was.
        message = f"{path}: {source.problem} after row {row}; the rest of the file is not read"
        yield Rejection(source=path, doc_id=None, stage=STAGE, error=source.error, message=message, row=row + 1)
    elif not seen_any:
        yield reject(STAGE, "empty_file", path, "no records (empty file)")


def _record(path: str, row: int, line: bytes, cfg: ParseConfig) -> Record:
    text = decode(path, line, row, None)
    if not isinstance(text, str):
        return text
    try:
        obj = json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        return reject(STAGE, "invalid_json", path, f"{exc.msg} at column {exc.colno}", row=row)
    except RecursionError:
        return reject(STAGE, "invalid_json", path, "JSON nested too deeply", row=row)
    if not isinstance(obj, dict):
        return reject(STAGE, "not_an_object", path, f"expected a JSON object, got {type(obj).__name__}", row=row)
    return from_fields(path, row, obj, cfg, "jsonl")
