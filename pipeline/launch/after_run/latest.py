"""The `_latest` pointer of a scheduled series of runs: ROOT/_latest names the output of the
last run that succeeded, so the next run can `--reuse` it without Airflow's database.

Written only after a run's verdict is ok (accounting holds, rejections within the limit);
read before the next run is planned. `--reuse` assumes each run's input is the whole corpus.
"""

import json

from docbeam.pipeline.core import tables
from docbeam.pipeline.io import storage

POINTER = "_latest"


def read(root: str) -> str | None:
    path = tables.join(root, POINTER)
    return storage.read_text(path).strip() or None if storage.exists(path) else None


def mark(root: str, output: str) -> None:
    storage.write_text(tables.join(root, POINTER), output + "\n")


def reuse_flags(root: str, output: str) -> dict:
    """The job option that reuses the last good run under `root` (none the first time)."""
    previous = read(root)
    return {"reuse": previous} if previous and previous.rstrip("/") != output.rstrip("/") else {}


def mark_if_ok(root: str, output: str) -> dict:
    """Point ROOT/_latest at `output` if its run succeeded; its verdict either way."""
    manifest = json.loads(storage.read_text(tables.join(output, tables.MANIFEST)))
    if manifest["verdict"]["ok"]:
        mark(root, output)
    return manifest["verdict"]
