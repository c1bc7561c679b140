"""`docbeam search RUN --queries FILE` per query, warm: 100 queries (the labelled questions,
repeated with a number so none is cached), answered in one process; the first pass loads and
compiles the model, then --rounds passes are timed. Printed: wall ms per query (embedding and
search, JSON out), median of the rounds with (min-max), and the CPU.

    python -m tests.benchmarks.search_queries out/sample --rounds 3
"""

import argparse
import contextlib
import io
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from docbeam.pipeline import cli
from tests.benchmarks.vector_formats import cpu_name
from tests.search.quality import questions

N = 100


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    qs = questions()
    lines = [json.dumps({"query": f"{qs[i % len(qs)]['q']} ({i})", "id": i}) for i in range(N)]
    path = Path(tempfile.mkdtemp()) / "queries.jsonl"
    path.write_text("\n".join(lines) + "\n")

    def one_pass() -> float:
        out = io.StringIO()
        t = time.perf_counter()
        with contextlib.redirect_stdout(out):
            status = cli.main(["search", a.run, "--queries", str(path), "--top-k", "10"])
        wall = time.perf_counter() - t
        assert status == 0 and len(out.getvalue().splitlines()) == N
        return wall * 1000 / N

    cold = one_pass()
    warm = [one_pass() for _ in range(a.rounds)]
    print(
        f"{N} queries: first pass (model load, compile) {cold:.1f} ms/query; warm {statistics.median(warm):.1f} "
        f"ms/query ({min(warm):.1f}-{max(warm):.1f}); CPU: {cpu_name()} ({os.cpu_count()} cores)"
    )


if __name__ == "__main__":
    main()
