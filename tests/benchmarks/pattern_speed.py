"""Throughput of the entity patterns (patterns.find_entities) on the host CPU, in MB/s of text.

    python -m tests.benchmarks.pattern_speed [--glob 'samples/docs/*'] [--language en] [--repeat 20]

The documents are parsed the way a run parses them (ingest's parse_file); the patterns then run
over every document's text `--repeat` times on one core. Time is this process's CPU time
(time.process_time), best pass: wall time on a shared, loaded machine measures the neighbours.
"""

import argparse
import glob
import inspect
import sys
import time


def texts(pattern: str) -> list[str]:
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.ingest.parse import parse_file

    out = []
    for path in sorted(glob.glob(pattern)):
        for rec in parse_file(path, lambda p=path: open(p, "rb")):
            if isinstance(rec, Document):
                out.append(rec.text)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--glob", default="samples/docs/*")
    ap.add_argument("--language", default="en")
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()

    from docbeam.pipeline.extractors.patterns import find_entities

    docs = texts(args.glob)
    size = sum(len(t.encode()) for t in docs)
    takes_language = "language" in inspect.signature(find_entities).parameters
    find = (lambda t: find_entities(t, args.language)) if takes_language else find_entities
    found = sum(len(find(t)) for t in docs)  # warm: compiled patterns, language data loaded
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.process_time()
        for t in docs:
            find(t)
        best = min(best, time.process_time() - t0)
    mb = size / 1e6
    print(f"{len(docs)} documents, {mb:.3f} MB, {found} entities: {mb / best:.2f} MB/s (best of {args.repeat})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
