"""Throughput cost of each extractor: the same corpus with and without it, in one run.

    python -m tests.benchmarks.extract_cost [--docs 300]

Chunk tokens/s is the work users asked for (document embeddings) per second of wall time;
segment tokens/s counts everything the encoder ran, candidates and sentences included.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

CONFIGS = ["", "entities", "labels", "summary", "keyphrases", "keyphrases,summary,labels,entities"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--json")
    args = ap.parse_args()

    from tests.corpus import build_corpus
    from tests.helpers import run_job

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs.jsonl"
        src.write_text("".join(json.dumps(d) + "\n" for d in build_corpus(args.docs, seed=5)))
        run_job(src, Path(tmp) / "warm-up")  # one-time start-up costs land here, not on the first row
        for i, extract in enumerate(CONFIGS):
            res = run_job(src, Path(tmp) / f"out{i}", *(["--extract", extract] if extract else []))
            chunk_tokens = res.stage_totals["chunk"]["tokens"]
            results.append(
                {
                    "extract": extract or "(none)",
                    "wall_s": res.wall_seconds,
                    "chunk_tokens_per_s": chunk_tokens / res.wall_seconds,
                    "segment_tokens_per_s": res.stage_totals["encode"]["tokens"] / res.wall_seconds,
                    "encoder_tokens": res.stage_totals["encode"]["tokens"],
                    "extractions": res.manifest["counts"]["extractions"],
                }
            )
    base = results[0]["chunk_tokens_per_s"]
    print(f"{'extract':<38}{'wall s':>8}{'doc tok/s':>11}{'vs none':>9}{'encoder tokens':>16}{'rows':>7}")
    for r in results:
        print(
            f"{r['extract']:<38}{r['wall_s']:>8.1f}{r['chunk_tokens_per_s']:>11,.0f}"
            f"{r['chunk_tokens_per_s'] / base:>8.2f}x{r['encoder_tokens']:>16,}{r['extractions']:>7,}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
