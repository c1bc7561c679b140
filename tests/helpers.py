"""Helpers shared by the tests: paths, running a job in-process, reading tables back."""

import json
from pathlib import Path

from pipeline.io import outputs
from pipeline.launch.job import run

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "docs"


def run_job(inputs, output, *extra: str):
    """Run docbeam in-process (DirectRunner -> FnApiRunner); returns its RunResult."""
    globs = [str(g) for g in (inputs if isinstance(inputs, list | tuple) else [inputs])]
    return run(["--input", *globs, "--output", str(output), *extra])


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def table(out, name, columns=None):
    return outputs.read_table(str(out), name, columns)
