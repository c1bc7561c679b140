"""Reading a finished run's outputs back (local or gs://), for the manifest and reports.
All I/O goes through `storage`, so it is retried and counted like every other write."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import storage


def existing(output: str, tables: tuple[str, ...], files: tuple[str, ...] = ()) -> list[str]:
    """Every file under the given table folders, plus those of `files` that exist."""
    base = output.rstrip("/")
    found = [p for t in tables for p in storage.list_prefix(f"{base}/{t}/")]
    return found + [p for f in files if storage.exists(p := f"{base}/{f}")]


def files(output: str, table: str, suffix: str) -> list[str]:
    return sorted(p for p in storage.list_prefix(f"{output.rstrip('/')}/{table}/") if p.endswith(suffix))


def read_table(output: str, table: str, columns: list[str] | None = None) -> pa.Table | None:
    tables = [
        pq.read_table(io.BytesIO(storage.read_bytes(p)), columns=columns) for p in files(output, table, ".parquet")
    ]
    return pa.concat_tables(tables) if tables else None


def read_errors(output: str) -> list[dict]:
    rows = []
    for path in files(output, "errors", ".jsonl"):
        rows += [json.loads(line) for line in storage.read_text(path).splitlines() if line.strip()]
    return rows
