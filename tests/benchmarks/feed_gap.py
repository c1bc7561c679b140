"""The gap between what the encoder can do and what a whole run feeds it, on this machine's device.

    python -m tests.benchmarks.feed_gap [--model DIR] [--docs 4000] [--processes 1,N] [--rounds 1]

1. The encoder alone: the corpus chunked and packed exactly as a run packs it (the run's batch
   shape on this platform), then `EncoderRuntime.encode` on those batches, compiled first:
   encoder tokens/s with nothing else to do.
2. Whole runs (`docbeam run`, DirectRunner, in this process) of the same corpus with each
   `--host-processes` count: document and encoder tokens/s over the run's wall time, and the
   device's busy fraction from the run's cost report.

The ratio of 2 to 1 is how much of the device a run uses. On a GPU machine this is step
`pipeline` of tests/device/run_checks.sh; here (a CPU) the encoder binds and the gap is small.
With --model on a folder from `bound_vs_measured --prepare`, random weights of the default
model's shapes are drawn (throughput does not depend on their values).
"""

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path


def corpus(n: int, folder: Path, shards: int = 16) -> list[str]:
    from tests.corpus import build_corpus

    folder.mkdir(parents=True, exist_ok=True)
    docs = build_corpus(n, seed=3)
    for i in range(shards):
        with open(folder / f"part-{i:02d}.jsonl", "w") as f:
            f.writelines(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs[i::shards])
    return [str(folder / "part-*.jsonl")]


def encoder_alone(argv: list[str], rounds: int) -> dict:
    """Encoder tokens/s of `EncoderRuntime.encode` on the run's own packed batches."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.model.tokenizer import load_tokenizer
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.encode.packing import Packer
    from docbeam.pipeline.encode.runtime import EncoderRuntime
    from docbeam.pipeline.ingest.chunking import Frame, chunk_documents
    from docbeam.pipeline.ingest.parse import parse_file
    from docbeam.pipeline.ingest.sandbox import Sandbox
    from docbeam.pipeline.launch.planning.planner import list_files, make_plan

    plan = make_plan(PipelineOptions(argv))
    tok, special = load_tokenizer(plan.encoder.local_checkpoint())
    frame = plan.frame or Frame(special)
    docs = []
    with Sandbox(plan.parse.parse_timeout_s, plan.parse.parse_memory_mb) as sandbox:
        for path, (_, name) in sorted(list_files(plan.inputs).items()):
            records = parse_file(path, lambda p=path: open(p, "rb"), plan.parse, name, sandbox)
            docs += [d for d in records if isinstance(d, Document)]
    packer, batches = Packer(plan.pack), []
    for _, chunks in chunk_documents(docs, tok, frame, plan.windowing):
        for seg in chunks:
            batches += packer.add(seg)
    batches += packer.flush()
    runtime = EncoderRuntime(plan.encoder)
    runtime.encode(batches)  # compiles every shape
    real = sum(b.real_tokens for b in batches)
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        runtime.encode(batches)
        times.append(time.perf_counter() - t0)
    return {"batches": len(batches), "encoder_tokens": real, "tokens_per_s": real / statistics.median(times)}


def whole_run(argv: list[str], out: Path, processes: int) -> dict:
    from docbeam.pipeline.graph import host_pool
    from docbeam.pipeline.launch.running.job import run

    host_pool.shutdown()  # each run starts its own pool, as from the command line
    t0 = time.perf_counter()
    res = run([*argv, "--output", str(out), "--overwrite", "--host-processes", str(processes)])
    wall = time.perf_counter() - t0
    totals = res.cost["totals"]
    return {
        "wall_s": wall,
        "document_tokens_per_s": totals["document_tokens"] / wall,
        "encoder_tokens_per_s": totals["encoder_tokens"] / wall,
        "device_busy": res.cost["device"]["busy_fraction"],
        "platform": res.cost["device"]["platform"],
        "accounting": res.manifest["accounting"]["ok"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="a checkpoint, or a folder from bound_vs_measured --prepare")
    ap.add_argument("--docs", type=int, default=4000)
    ap.add_argument("--processes", default=f"1,{os.cpu_count()}", help="host-process counts to run")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        argv = ["--input", *corpus(args.docs, t / "corpus")]
        if args.model:
            from tests.benchmarks.bound_vs_measured import SHAPES, with_random_weights

            model = with_random_weights(args.model, t / "model") if (args.model / SHAPES).exists() else args.model
            argv += ["--model", str(model)]
        alone = encoder_alone([*argv, "--output", str(t / "plan")], args.rounds)
        print(
            f"encoder alone: {alone['tokens_per_s']:,.0f} encoder tokens/s "
            f"({alone['batches']} batches, {alone['encoder_tokens']:,} tokens)"
        )
        found: dict = {"encoder_alone": alone}
        for p in (int(x) for x in args.processes.split(",")):
            runs = [whole_run(argv, t / "out", p) for _ in range(args.rounds)]
            r = sorted(runs, key=lambda x: x["wall_s"])[len(runs) // 2]
            found[f"host_processes_{p}"] = r
            share = r["encoder_tokens_per_s"] / alone["tokens_per_s"]
            print(
                f"--host-processes {p}: {r['document_tokens_per_s']:,.0f} document tokens/s, "
                f"{r['encoder_tokens_per_s']:,.0f} encoder tokens/s = {share:.0%} "
                f"of the encoder alone; {r['platform']} busy {r['device_busy']:.0%}; accounting "
                f"{'ok' if r['accounting'] else 'FAILED'}"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=2))


if __name__ == "__main__":
    main()
