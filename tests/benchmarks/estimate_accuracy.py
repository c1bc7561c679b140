"""How close `docbeam estimate` comes to the run it projects, on corpora of different shape.

    python -m tests.benchmarks.estimate_accuracy [--sample 200] [--synthetic 2000] [--rounds 3] [--json OUT]

For each corpus: `docbeam estimate --hardware cpu` (this machine: the projection is the run's
own), then the run itself, in this process, one after the other, `--rounds` times: medians of
projected against actual for document tokens, encoder tokens, wall seconds and dollars (with
the spread of the wall-time errors), and the estimate's own time against the run's. Corpora:

1. the bundled samples (samples/docs: JSONL, gzipped JSONL, Parquet, HTML, text, Markdown);
2. real files this machine has, of every format it holds: the PDF manuals under /usr/share/doc,
   its HTML manuals, the licences in /usr/share/common-licenses (text), Markdown under
   /usr/share/doc (what is missing on another machine is left out), with a sample of
   --real-sample documents: about half its files, so which are drawn matters;
3. --synthetic documents (tests/corpus.py) in 8 JSONL shards.
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

REAL = {  # folder name -> glob of files this kind of machine has
    "pdf": "/usr/share/doc/*/*.pdf",
    "html": "/usr/share/doc/*/html/*.html",
    "licences": "/usr/share/common-licenses/*",
    "markdown": "/usr/share/doc/**/*.md",
}


def real_files(folder: Path, per_kind: int = 12) -> list[str]:
    """Up to `per_kind` files of each kind (sorted, so every machine of a kind picks the same)."""
    found = []
    for kind, pattern in REAL.items():
        picked = sorted(p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p))[:per_kind]
        for i, src in enumerate(picked):
            suffix = ".txt" if kind == "licences" else Path(src).suffix
            dest = folder / f"{kind}-{i:02d}-{Path(src).stem}{suffix}"
            shutil.copyfile(src, dest)
            found.append(str(dest))
    return found


def synthetic(folder: Path, n: int) -> None:
    from tests.corpus import build_corpus

    docs = build_corpus(n, seed=7)
    for i in range(8):
        with open(folder / f"part-{i}.jsonl", "w") as f:
            f.writelines(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs[i::8])


def measure(name: str, inputs: str, out: Path, sample: int) -> dict:
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.launch.commands.estimate import estimate
    from docbeam.pipeline.launch.planning.planner import make_plan
    from tests.helpers import run_job

    options = PipelineOptions(["--input", inputs])
    t0 = time.perf_counter()
    est = estimate(make_plan(options, needs_output=False), options, sample_size=sample, hardware="cpu", pricing=None)
    est_s = time.perf_counter() - t0
    res = run_job(inputs, out)
    p, s, t = est["projection"], est["sample"], res.cost["totals"]
    projected = {
        "document_tokens": p["document_tokens"],
        "encoder_tokens": p["document_tokens"] * s["encoder_tokens_per_document_token"],
        "wall_s": p["hours"] * 3600,
        "usd": p["usd"],
    }
    actual = {
        "document_tokens": t["document_tokens"],
        "encoder_tokens": t["encoder_tokens"],
        "wall_s": res.wall_seconds,
        "usd": t["cost_usd"],
    }
    return {
        "corpus": name,
        "sampled": s["documents"],
        "projected": projected,
        "actual": actual,
        "error": {k: projected[k] / actual[k] - 1 for k in actual},
        "estimate_s": est_s,
        "estimate_share": est_s / res.wall_seconds,
        "interval": p["document_tokens_interval"],
    }


def median(runs: list[dict]) -> dict:
    """Each figure's median over the rounds; the spread of the wall-time error beside it."""
    out = dict(runs[0])
    for part in ("projected", "actual", "error"):
        out[part] = {k: statistics.median(r[part][k] for r in runs) for k in runs[0][part]}
    out["estimate_share"] = statistics.median(r["estimate_share"] for r in runs)
    out["wall_error_spread"] = [min(r["error"]["wall_s"] for r in runs), max(r["error"]["wall_s"] for r in runs)]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=200)
    ap.add_argument("--synthetic", type=int, default=2000)
    ap.add_argument("--real-sample", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    from docbeam.pipeline.core.cpu_features import cpu_name

    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; estimate --sample {args.sample} --hardware cpu, then the run")
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        (t / "real").mkdir()
        real = real_files(t / "real")
        (t / "synthetic").mkdir()
        synthetic(t / "synthetic", args.synthetic)
        corpora = {
            "bundled samples": (str(Path("samples/docs").resolve()), args.sample),
            f"real files ({len(real)}), sample {args.real_sample}": (str(t / "real"), args.real_sample),
            f"synthetic ({args.synthetic:,} documents)": (str(t / "synthetic"), args.sample),
        }
        for i, (name, (inputs, sample)) in enumerate(corpora.items()):
            runs = [measure(name, inputs, t / f"out{i}-{k}", sample) for k in range(args.rounds)]
            found.append(median(runs))
    head = f"{'corpus':<34} {'doc tokens':>22} {'encoder tokens':>22} {'wall s':>16} {'dollars':>20} {'estimate':>9}"
    print(head)
    for r in found:
        cells = []
        for k, fmt in (("document_tokens", ",.0f"), ("encoder_tokens", ",.0f"), ("wall_s", ".1f"), ("usd", ".5f")):
            cells.append(f"{r['projected'][k]:{fmt}}/{r['actual'][k]:{fmt}} {r['error'][k]:+.0%}")
        print(
            f"{r['corpus']:<34} {cells[0]:>22} {cells[1]:>22} {cells[2]:>16} {cells[3]:>20} {r['estimate_share']:>8.0%}"
        )
    for r in found:
        lo, hi = r["wall_error_spread"]
        print(f"  {r['corpus']}: wall-time error over {args.rounds} rounds {lo:+.0%} to {hi:+.0%}")
    print(
        f"each cell: projected/actual and the projection's error, medians of {args.rounds}; "
        "estimate: its time as a share of the run's"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
