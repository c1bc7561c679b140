"""Reading a finished run's outputs back (local or gs://), for the manifest and reports.
All I/O goes through `storage`, so it is retried and counted like every other write."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq

from docbeam.pipeline.core import tables as t
from docbeam.pipeline.io import storage


def existing(output: str, tables: tuple[str, ...], files: tuple[str, ...] = ()) -> list[str]:
    """Every file under the given table folders, plus those of `files` that exist."""
    found = [p for table in tables for p in storage.list_prefix(t.folder(output, table))]
    return found + [p for f in files if storage.exists(p := t.join(output, f))]


def files(output: str, table: str, suffix: str) -> list[str]:
    return sorted(p for p in storage.list_prefix(t.folder(output, table)) if p.endswith(suffix))


def read_table(output: str, table: str, columns: list[str] | None = None) -> pa.Table | None:
    parts = [
        pq.read_table(io.BytesIO(storage.read_bytes(p)), columns=columns) for p in files(output, table, ".parquet")
    ]
    return pa.concat_tables(parts) if parts else None


def read_errors(output: str) -> list[dict]:
    rows = []
    for path in files(output, t.ERRORS, t.SUFFIX[t.ERRORS]):
        rows += [json.loads(line) for line in storage.read_text(path).splitlines() if line.strip()]
    return rows
