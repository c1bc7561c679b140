import json
from pathlib import Path

import pytest

from pipeline import outputs
from pipeline.run import run

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples" / "docs"


def run_job(inputs, output, *extra: str):
    """Run docbeam in-process (DirectRunner -> FnApiRunner) and return its RunResult."""
    globs = [str(g) for g in (inputs if isinstance(inputs, list | tuple) else [inputs])]
    return run(["--input", *globs, "--output", str(output), *extra])


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sample")
    res = run_job(SAMPLES / "*", out)
    return out, res


def table(out, name, columns=None):
    return outputs.read_table(str(out), name, columns)
