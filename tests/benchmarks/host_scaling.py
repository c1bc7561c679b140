"""Host processes feeding one device: whole-run throughput with 1 and with N host processes.

    python -m tests.benchmarks.host_scaling [--docs 2000] [--copies 2] [--rounds 3]
        [--device-us-per-token 0.1] [--tiny-docs 20000] [--processes 2] [--json OUT]

Three methods, each run `--rounds` times interleaved, medians and spread printed, ratios of
medians to the one-process run: 1 host process; N, the pool started by the run (a run from the
command line, its start-up in the figure); N, the pool already running (a worker past its first
bundle: Dataflow keeps a worker's process, and so its pool, for the whole job). Measured on:

1. The stand-in device (tests/benchmarks/standin.py) holding each batch as long as a worker's
   chips would (--device-us-per-token; 0.1 us is a v5e:4 worker at its compiled bound, 10M
   tokens/s): whole-run document tokens/s and the device's busy fraction (device seconds /
   wall), on two corpora of different shape (the synthetic corpus, and short documents).
2. A real JAX encoder too small to matter (1 layer, 32 wide: the host is all that is left)
   over --tiny-docs documents in 8 JSONL shards.

With N > 1 the run is what `docbeam run --host-processes N` does: parse and chunk in a pool of N
processes (pipeline/graph/host_pool.py), the encoder in this one.
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from tests.benchmarks.standin import StandInHandler  # noqa: E402

CORPORA = {  # name -> build_corpus arguments (besides n)
    "synthetic (20-400 words)": {"seed": 0},
    "short (5-60 words)": {"seed": 1, "min_words": 5, "max_words": 60},
}


def write_shards(rows: list[dict], folder: Path, shards: int = 8) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(shards):
        with open(folder / f"part-{i}.jsonl", "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows[i::shards])
    return [str(folder / "part-*.jsonl")]


def corpus(n: int, copies: int, folder: Path, **shape) -> list[str]:
    from tests.corpus import build_corpus

    docs = build_corpus(n, **shape)
    return write_shards([{"id": f"{d['id']}-{c}", "text": d["text"]} for c in range(copies) for d in docs], folder)


def tiny_checkpoint(folder: Path) -> Path:
    """1 layer, 32 wide, 256 positions, random weights, the default model's tokenizer."""
    from tests.model import tiny

    tiny.HIDDEN, tiny.HEADS, tiny.FFN, tiny.POSITIONS = 32, 2, 64, 256
    return tiny.write_tiny_bert(folder, config={"max_position_embeddings": 256})


def one_run(
    inputs: list[str], out: Path, processes: int, extra: list[str], device_us: float | None, warm: bool = False
) -> dict:
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.graph import host_pool
    from docbeam.pipeline.launch.planning.planner import make_plan
    from docbeam.pipeline.launch.running.job import run

    argv = ["--input", *inputs, "--output", str(out), "--overwrite", "--host-processes", str(processes), *extra]
    handler = None
    if device_us is not None:
        plan = make_plan(PipelineOptions(argv))
        handler = StandInHandler(plan.encoder, plan.config.embedding_dim, device_us * 1e-6)
    host_pool.shutdown()
    if warm:
        pool = host_pool.pool(processes)
        [f.result() for f in [pool.submit(host_pool.probe) for _ in range(processes)]]
    t0, cpu0 = time.perf_counter(), time.process_time()
    res = run(argv, handler=handler)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    enc, t = res.stage_totals.get("encode", {}), res.stage_totals
    return {
        "this_process_cpu_s": cpu,  # with a pool: the encoding process's CPU, the whole run's
        "pool_cpu_s": sum(t.get(s, {}).get("cpu_us", 0) for s in ("parse", "chunk")) / 1e6 if processes > 1 else 0,
        "wall_s": wall,
        "document_tokens": res.cost["totals"]["document_tokens"],
        "tokens_per_s": res.cost["totals"]["document_tokens"] / wall,
        "device_busy": enc.get("device_us", 0) / 1e6 / wall,
        "accounting": res.manifest["accounting"]["ok"],
    }


def methods(n: int) -> dict[str, tuple[int, bool]]:
    return {"1": (1, False), f"{n}, pool started by the run": (n, False), f"{n}, pool running": (n, True)}


def compare(name: str, inputs: list[str], tmp: Path, n: int, rounds: int, extra: list[str], device_us) -> dict:
    runs: dict[str, list[dict]] = {m: [] for m in methods(n)}
    for _ in range(rounds):
        for m, (p, warm) in methods(n).items():
            runs[m].append(one_run(inputs, tmp / "out", p, extra, device_us, warm))
    out: dict = {"corpus": name}
    for p, rs in runs.items():
        rates = sorted(r["tokens_per_s"] for r in rs)
        out[p] = {
            "tokens_per_s": statistics.median(rates),
            "spread": [rates[0], rates[-1]],
            "device_busy": statistics.median(r["device_busy"] for r in rs),
            "document_tokens": rs[0]["document_tokens"],
            "accounting": all(r["accounting"] for r in rs),
            # host rates (hardware.yaml's host:), document tokens/s: a pool process's per core, the
            # encoding process's whole-run ceiling (its CPU seconds, start-up included)
            "pool_per_core": statistics.median(r["document_tokens"] / r["pool_cpu_s"] for r in rs)
            if rs[0]["pool_cpu_s"]
            else None,
            "encoding_process": statistics.median(r["document_tokens"] / r["this_process_cpu_s"] for r in rs),
        }
    for m in methods(n):
        out[m]["ratio"] = out[m]["tokens_per_s"] / out["1"]["tokens_per_s"]
    return out


def show(r: dict, n: int, device: bool) -> None:
    print(f"  {r['corpus']}: {r['1']['document_tokens']:,} document tokens")
    for p in methods(n):
        m = r[p]
        busy = f", device busy {m['device_busy']:.1%}" if device else ""
        lo, hi = m["spread"]
        print(
            f"    {p:<26} host process(es): {m['tokens_per_s']:>9,.0f} doc tokens/s [{lo:,.0f}..{hi:,.0f}] "
            f"{m['ratio']:.2f}x{busy}"
        )
    warm = r[list(methods(n))[-1]]
    print(
        f"    host rates, pool running: {warm['pool_per_core']:,.0f} document tokens/s per pool process's CPU "
        f"second (parse, chunk); the encoding process {warm['encoding_process']:,.0f} per its CPU second"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--device-us-per-token", type=float, default=0.1)
    ap.add_argument(
        "--batch-rows",
        type=int,
        default=128,
        help="stand-in batches of this many 256-token rows: 128 is a v5e:4 worker's (8,192 tokens per chip)",
    )
    ap.add_argument("--tiny-docs", type=int, default=20000, help="0: skip the tiny-encoder measurement")
    ap.add_argument("--json")
    args = ap.parse_args()
    from docbeam.pipeline.core.cpu_features import cpu_name

    n, found = args.processes, {}
    print(f"CPU: {cpu_name()}, {os.cpu_count()} cores; median of {args.rounds}, runs interleaved")
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        print(f"1. stand-in device at {args.device_us_per_token} us per token fed:")
        for i, (name, shape) in enumerate(CORPORA.items()):
            inputs = corpus(args.docs, args.copies, t / f"c{i}", **shape)
            rows = ["--batch-rows", str(args.batch_rows)]
            r = compare(name, inputs, t, n, args.rounds, rows, args.device_us_per_token)
            show(r, n, True)
            found[f"standin {name}"] = r
        if args.tiny_docs:
            ckpt = tiny_checkpoint(t / "tiny")
            inputs = corpus(args.tiny_docs, 1, t / "tiny-corpus", seed=2)
            print("2. a real encoder too small to matter (1 layer, 32 wide), 8 shards:")
            r = compare(f"{args.tiny_docs:,} documents", inputs, t, n, args.rounds, ["--model", str(ckpt)], None)
            show(r, n, False)
            found["tiny encoder"] = r
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
