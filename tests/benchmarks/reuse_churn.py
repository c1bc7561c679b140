"""What `--reuse` saves on a daily rerun: a corpus, then the same corpus with 5% of the
documents changed, 5% added and 5% deleted, embedded fresh and with `--reuse`, side by side.

    python -m tests.benchmarks.reuse_churn [--docs 2000] [--churn 0.05]

The fresh rerun is what the DAG paid before `--reuse`; the two reruns read the same input.
"""

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--churn", type=float, default=0.05)
    args = ap.parse_args()

    from tests.corpus import build_corpus
    from tests.helpers import run_job

    docs = build_corpus(args.docs, seed=0)
    rng = random.Random(7)
    k = int(len(docs) * args.churn)
    picked = rng.sample(range(len(docs)), 2 * k)
    changed, deleted = set(picked[:k]), set(picked[k:])
    extra = build_corpus(k, seed=9)
    day2 = [
        {**d, "text": d["text"] + " Revised today." if i in changed else d["text"]}
        for i, d in enumerate(docs)
        if i not in deleted
    ] + [{"id": f"new-{i:05d}", "text": d["text"]} for i, d in enumerate(extra)]

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for name, rows in (("day1", docs), ("day2", day2)):
            (t / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        run_job(t / "day1.jsonl", t / "warm-up")  # start-up costs land here
        runs = {
            "day 1, full": run_job(t / "day1.jsonl", t / "day1"),
            "day 2, fresh": run_job(t / "day2.jsonl", t / "day2-fresh"),
            "day 2, --reuse day 1": run_job(t / "day2.jsonl", t / "day2-reuse", "--reuse", str(t / "day1")),
        }
    print(f"{len(docs)} documents; day 2: {k} changed, {k} added, {k} deleted")
    print(f"{'run':<22}{'wall s':>8}{'encoded docs':>14}{'reused docs':>13}{'encoder tokens':>16}{'cost $':>10}")
    for name, res in runs.items():
        reuse = res.cost["reuse"]
        print(
            f"{name:<22}{res.wall_seconds:>8.1f}{reuse['documents_encoded']:>14,}{reuse['documents_reused']:>13,}"
            f"{res.cost['totals']['encoder_tokens']:>16,}{res.cost['totals']['cost_usd']:>10.5f}"
        )
    fresh, reused = runs["day 2, fresh"], runs["day 2, --reuse day 1"]
    print(
        f"--reuse / fresh: wall {reused.wall_seconds / fresh.wall_seconds:.2f}x, "
        f"cost {reused.cost['totals']['cost_usd'] / fresh.cost['totals']['cost_usd']:.2f}x; "
        f"removed listed: {reused.manifest['reuse']['documents_removed']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
