"""Throughput cost of each extractor: the same corpus with and without it, in one run.

    python -m tests.benchmarks.extract_cost [--docs 300] [--configs ,keyphrases] [--repeats 3]

Chunk tokens/s is the work users asked for (document embeddings) per second of wall time;
segment tokens/s counts everything the encoder ran, candidates and sentences included.
With --repeats, the configurations run in interleaved rounds (one round of all, then the
next, so drift hits all alike); the table shows medians, "vs none" the median of each round's
ratio to that round's plain run, with the per-round ratios beside it.
"""

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

CONFIGS = ["", "entities", "labels", "summary", "keyphrases", "keyphrases,summary,labels,entities"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--configs", help="comma-separated --extract values, '' for none (default: each alone, all four)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    configs = args.configs.split(",") if args.configs is not None else CONFIGS
    if configs[0] != "":
        configs = ["", *configs]  # every ratio is to the plain run of the same round

    from tests.corpus import build_corpus
    from tests.helpers import run_job

    rounds: list[list[dict]] = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs.jsonl"
        src.write_text("".join(json.dumps(d) + "\n" for d in build_corpus(args.docs, seed=5)))
        run_job(src, Path(tmp) / "warm-up")  # one-time start-up costs land here, not on the first row
        for r in range(args.repeats):
            one = []
            for i, extract in enumerate(configs):
                flags = ["--extract", extract] if extract else []
                one.append(_measure(run_job(src, Path(tmp) / f"r{r}-{i}", *flags), extract))
            rounds.append(one)
    print(
        f"{'extract':<38}{'wall s':>8}{'doc tok/s':>11}{'vs none':>9}{'per round':>20}{'encoder tokens':>16}{'rows':>7}"
    )
    results = []
    for i in range(len(configs)):
        runs = [rnd[i] for rnd in rounds]
        ratios = [rnd[i]["chunk_tokens_per_s"] / rnd[0]["chunk_tokens_per_s"] for rnd in rounds]
        med = {k: statistics.median(run[k] for run in runs) for k in ("wall_s", "chunk_tokens_per_s")}
        results.append({**runs[0], **med, "vs_none": statistics.median(ratios), "vs_none_rounds": ratios})
        print(
            f"{runs[0]['extract']:<38}{med['wall_s']:>8.1f}{med['chunk_tokens_per_s']:>11,.0f}"
            f"{statistics.median(ratios):>8.2f}x{', '.join(f'{x:.2f}' for x in ratios):>20}"
            f"{runs[0]['encoder_tokens']:>16,}{runs[0]['extractions']:>7,}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


def _measure(res, extract: str) -> dict:
    chunk_tokens = res.stage_totals["chunk"]["tokens"]
    return {
        "extract": extract or "(none)",
        "wall_s": res.wall_seconds,
        "chunk_tokens_per_s": chunk_tokens / res.wall_seconds,
        "segment_tokens_per_s": res.stage_totals["encode"]["tokens"] / res.wall_seconds,
        "encoder_tokens": res.stage_totals["encode"]["tokens"],
        "extractions": res.manifest["counts"]["extractions"],
    }


if __name__ == "__main__":
    sys.exit(main())
