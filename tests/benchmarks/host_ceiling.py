"""The host ceiling: how many document tokens per second one host core can feed an encoder.

    python -m tests.benchmarks.host_ceiling [--docs 2000] [--copies 3] [--input GLOB]
                                            [--device-us-per-token 0] [--json OUT]

The whole pipeline runs (DirectRunner, in this process, one worker) with the encoder swapped
for a measurement stand-in: it returns unit vectors of the right shape without computing
anything, and with --device-us-per-token it holds each batch as long as an accelerator would.
The stand-in lives in this file only; nothing in docbeam can reach it. What remains is the
host's work: parse, chunk, pack, assemble, write. Each is timed in CPU seconds (the
tokenizer's thread pool pinned to one thread), so the figures are per host core and do not
depend on what else the machine is doing.
"""

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ["RAYON_NUM_THREADS"] = "1"  # the tokenizer's pool: one thread, so CPU s = one core's
os.environ["TOKENIZERS_PARALLELISM"] = "false"

from tests.benchmarks.standin import HOST_WORK_DURING, StandInHandler  # noqa: E402

STAGES = ("match", "parse", "chunk", "pack", "encode", "assemble", "write")


def corpus(args, tmp: Path, shards: int = 8) -> list[str]:
    """The corpus as `shards` JSONL files (crawls ship in shards; workers split work by file)."""
    if args.input:
        return [args.input]
    from tests.corpus import build_corpus

    docs = build_corpus(args.docs, seed=0)
    rows = [{"id": f"{d['id']}-{c}", "text": d["text"]} for c in range(args.copies) for d in docs]
    for i in range(shards):
        with open(tmp / f"part-{i}.jsonl", "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows[i::shards])
    return [str(tmp / "part-*.jsonl")]


def measure(inputs: list[str], out: Path, device_us: float, extra: list[str], threads: int = 1) -> dict:
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.launch.planning.planner import make_plan
    from docbeam.pipeline.launch.running.job import run

    argv = [
        "--input",
        *inputs,
        "--output",
        str(out),
        "--overwrite",
        "--direct_running_mode=in_memory",
        "--direct_num_workers=1",
        *extra,
    ]
    plan = make_plan(PipelineOptions(argv))
    handler = StandInHandler(plan.encoder, plan.config.embedding_dim, device_us * 1e-6)
    HOST_WORK_DURING.clear()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    res = run(argv, handler=handler)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    t = res.stage_totals
    doc_tokens = res.cost["totals"]["document_tokens"]
    stages = {s: t.get(s, {}).get("cpu_us", 0) / 1e6 for s in STAGES}
    return {
        "documents": res.manifest["counts"]["ok"],
        "document_tokens": doc_tokens,
        "cpu_s": cpu,
        "wall_s": wall,
        "device_s": t.get("encode", {}).get("device_us", 0) / 1e6,
        "per_core": doc_tokens / cpu,
        "stages_cpu_s": stages,
        "stages_per_core": {s: doc_tokens / v if v else None for s, v in stages.items()},
        "batches_overlapped": sum(n > 0 for n in HOST_WORK_DURING),
        "batches": len(HOST_WORK_DURING),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--copies", type=int, default=4, help="the corpus repeated under other ids (more tokens)")
    ap.add_argument("--input", help="a corpus of your own instead")
    ap.add_argument("--device-us-per-token", type=float, default=0.0, help="stand-in device time per token fed")
    ap.add_argument("--extract", default="")
    ap.add_argument("--threads", type=int, default=1, help="worker threads (DirectRunner multi_threading if > 1)")
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = corpus(args, Path(tmp))
        extra = ["--extract", args.extract] if args.extract else []
        r = measure(inputs, Path(tmp) / "out", args.device_us_per_token, extra, args.threads)
    print(
        f"{r['documents']:,} documents, {r['document_tokens']:,} document tokens; runner: DirectRunner "
        f"(FnApiRunner in this process, 1 worker), tokenizer on 1 thread; encoder: measurement stand-in"
    )
    print(
        f"whole job: {r['cpu_s']:.1f} CPU s, {r['wall_s']:.1f} s wall, stand-in device {r['device_s']:.1f} s "
        f"-> {r['per_core']:,.0f} document tokens/s per host core"
    )
    if args.device_us_per_token:
        print(
            f"stand-in device {r['device_s']:.1f} s, host {r['cpu_s']:.1f} CPU s, wall {r['wall_s']:.1f} s; "
            f"{r['batches_overlapped']} of {r['batches']} batches overlapped host work"
        )
    for s in STAGES:
        per = r["stages_per_core"][s]
        print(f"  {s:<9} {r['stages_cpu_s'][s]:7.2f} CPU s   {per:>12,.0f} doc tokens/s/core" if per else f"  {s:<9} -")
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2))


if __name__ == "__main__":
    main()
