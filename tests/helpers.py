"""Helpers shared by the tests: paths, running a job in-process, reading tables back."""

import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path

from docbeam.pipeline.cost.memwatch import rss_bytes
from docbeam.pipeline.io import outputs
from docbeam.pipeline.launch.running.job import run

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples" / "docs"


def child_env(**extra: str) -> dict[str, str]:
    """The environment for a child Python that imports `tests.*` (PYTHONSAFEPATH keeps the
    working directory off its path; docbeam itself comes from the install, never the root)."""
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_job(inputs, output, *extra: str):
    """Run docbeam in-process (DirectRunner -> FnApiRunner); returns its RunResult."""
    globs = [str(g) for g in (inputs if isinstance(inputs, list | tuple) else [inputs])]
    return run(["--input", *globs, "--output", str(output), *extra])


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def table(out, name, columns=None):
    return outputs.read_table(str(out), name, columns)


@contextmanager
def rss_growth():
    """Peak growth of this process's resident memory while the block runs, in bytes.

    ru_maxrss is the process's lifetime peak, which earlier tests in the same process
    (other models loaded) have already set; this samples the current RSS instead.
    """
    start, peak, done = rss_bytes(), [0], threading.Event()

    def sample():
        while not done.wait(0.02):
            peak[0] = max(peak[0], rss_bytes() - start)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    try:
        yield peak
    finally:
        done.set()
        t.join()
        peak[0] = max(peak[0], rss_bytes() - start)
