"""Reading a finished run's outputs back (local or gs://), for the manifest and reports."""

import json

import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems


def files(output: str, table: str, suffix: str) -> list[str]:
    pattern = f"{output.rstrip('/')}/{table}/*{suffix}"
    return sorted(m.path for m in FileSystems.match([pattern])[0].metadata_list)


def read_table(output: str, table: str, columns: list[str] | None = None):
    import pyarrow as pa

    tables = []
    for path in files(output, table, ".parquet"):
        with FileSystems.open(path) as f:
            tables.append(pq.read_table(f, columns=columns))
    return pa.concat_tables(tables) if tables else None


def read_errors(output: str) -> list[dict]:
    rows = []
    for path in files(output, "errors", ".jsonl"):
        with FileSystems.open(path) as f:
            rows += [json.loads(line) for line in f.read().decode().splitlines() if line.strip()]
    return rows


def write_text(path: str, text: str) -> None:
    with FileSystems.create(path) as f:
        f.write(text.encode())


def read_text(path: str) -> str:
    with FileSystems.open(path) as f:
        return f.read().decode()
