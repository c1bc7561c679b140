"""The `docbeam` command: run, submit, estimate, report, kernels."""

import argparse
import json
import os
import sys

USAGE = """docbeam <command> [options]

commands:
  run       run the job (DirectRunner by default) on --input, write the output contract to --output
  submit    the same job on Dataflow with TPU or GPU workers (--dry-run prints the options)
  estimate  run a sample here, project time and cost for the whole input on some hardware
  report    print / re-render the cost report of a finished run
  kernels   which attention kernels this machine can run, and why not
  embed     vectors for texts (queries), exactly as the pipeline computes them

`docbeam <command> --help` explains each one."""


def cmd_run(argv: list[str]) -> int:
    from pipeline.launch.console import run_main

    return run_main(argv, "docbeam run")


def cmd_submit(argv: list[str]) -> int:
    from pipeline.launch import submit
    from pipeline.launch.console import run_main

    parser = argparse.ArgumentParser(
        prog="docbeam submit",
        description="Run the job on Dataflow with TPU or GPU workers. Takes every `docbeam run` flag "
        "(--input gs://..., --output gs://..., --extract, ...) plus the Dataflow flags below.",
    )
    submit.add_submit_args(parser)
    if "-h" in argv or "--help" in argv:
        parser.print_help()
        return 0
    ns, job = parser.parse_known_args(argv)
    try:
        opts = submit.dataflow_options(ns)
        hardware = submit.hardware_spec(ns)
    except submit.SubmitError as exc:
        print(f"docbeam submit: {exc}", file=sys.stderr)
        return 2
    job_argv = [*job, *submit.dataflow_argv(ns), f"--hardware={hardware}"]
    if ns.dry_run:
        print(
            json.dumps(
                {
                    "pipeline_options": opts,
                    "hardware": hardware,
                    "job_flags": job,
                    "missing": submit.missing_required(ns),
                    "argv": job_argv,
                },
                indent=2,
            )
        )
        return 0
    return run_main(job_argv, "docbeam submit")


def cmd_estimate(argv: list[str]) -> int:
    from apache_beam.options.pipeline_options import PipelineOptions

    from pipeline.core.flags import UsageError
    from pipeline.launch.console import configure_logging
    from pipeline.launch.estimate import estimate, render
    from pipeline.launch.plan import make_plan

    parser = argparse.ArgumentParser(
        prog="docbeam estimate",
        description="Run the job on a sample of --input here, then project time and dollars for the whole input "
        "on --hardware. Other `docbeam run` flags (--extract, --max-seq-len, ...) apply to the sample.",
    )
    parser.add_argument("--input", nargs="+", action="extend", required=True, metavar="GLOB")
    parser.add_argument("--sample", type=int, default=200, help="documents to run here (default 200)")
    parser.add_argument(
        "--hardware",
        default="cpu",
        help="cpu (this machine), tpu-v5e, tpu-v6e, tpu-v5p, l4, a100, a100-80gb, h100; NAME:N for N chips",
    )
    parser.add_argument("--pricing", help="price table YAML (default infra/pricing/prices.yaml)")
    parser.add_argument("--json", metavar="FILE", help="also write the estimate as JSON")
    ns, job = parser.parse_known_args(argv)
    configure_logging()
    try:
        options = PipelineOptions(["--input", *ns.input, *job])
        plan = make_plan(options, needs_output=False)
        est = estimate(plan, options, sample_size=ns.sample, hardware=ns.hardware, pricing=ns.pricing)
    except (UsageError, ValueError) as exc:
        print(f"docbeam estimate: {exc}", file=sys.stderr)
        return 2
    print(render(est))
    if ns.json:
        with open(ns.json, "w") as f:
            json.dump(est, f, indent=2)
    return 0


def cmd_report(argv: list[str]) -> int:
    from pipeline.core import tables
    from pipeline.cost import report
    from pipeline.io import storage

    parser = argparse.ArgumentParser(
        prog="docbeam report",
        description="Print the cost report of a finished run and re-render _cost/report.md and stages.png "
        "from _cost/report.json.",
    )
    parser.add_argument("dir", help="the run's --output folder or gs:// prefix")
    parser.add_argument("--json", action="store_true", help="print the JSON instead of the Markdown")
    ns = parser.parse_args(argv)
    path = tables.join(ns.dir, tables.COST, "report.json")
    if not storage.exists(path):
        print(f"docbeam report: {path} not found (is {ns.dir} a finished docbeam run?)", file=sys.stderr)
        return 2
    data = json.loads(storage.read_text(path))
    report.write(data, ns.dir)
    print(json.dumps(data, indent=2) if ns.json else report.render_markdown(data))
    return 0


def cmd_embed(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="docbeam embed",
        description="Vectors for texts (queries), computed exactly as `docbeam run` computes them: the same "
        "checkpoint, tokenizer, chunking, encoder, pooling and normalisation. A text that fits one window gets "
        "the vector the pipeline stores for a chunk of that text. Prints a JSON list of vectors.",
    )
    parser.add_argument("texts", nargs="*", metavar="TEXT", help="texts to embed")
    parser.add_argument("--input", metavar="FILE", help="also embed every line of FILE ('-' for standard input)")
    parser.add_argument("--out", metavar="FILE.npy", help="write the vectors as a .npy array instead of JSON")
    parser.add_argument("--model", metavar="PATH", help="the checkpoint `docbeam run` used (default all-MiniLM-L6-v2)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    parser.add_argument("--attention", default="auto")
    ns = parser.parse_args(argv)
    texts = list(ns.texts)
    if ns.input:
        try:
            lines = sys.stdin.read() if ns.input == "-" else open(ns.input, encoding="utf-8").read()
        except OSError as exc:
            print(f"docbeam embed: --input {ns.input}: {exc.strerror}", file=sys.stderr)
            return 2
        texts += [line for line in lines.splitlines() if line.strip()]
    if not texts:
        print("docbeam embed: no text to embed (give TEXT arguments or --input FILE)", file=sys.stderr)
        return 2
    import numpy as np

    from model.config import CheckpointError
    from pipeline.encode.embed import Embedder

    try:
        vectors = Embedder(ns.model, dtype=ns.dtype, attention=ns.attention)(texts)
    except (CheckpointError, ValueError) as exc:
        print(f"docbeam embed: {exc}", file=sys.stderr)
        return 2
    if ns.out:
        np.save(ns.out, vectors)
        print(f"{len(texts)} vectors of {vectors.shape[1]} floats -> {ns.out}", file=sys.stderr)
    else:
        json.dump(vectors.tolist(), sys.stdout)
        print()
    return 0


def cmd_kernels(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="docbeam kernels", description="List every attention implementation, whether it runs here and why not."
    )
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args(argv)
    import kernels

    platform = kernels.platform_of_backend()
    shape = (32, args.seq_len, 12, 32)
    print(f"platform: {platform}; shape [batch, seq, heads, head_dim] = {list(shape)}, {args.dtype}\n")
    for r in kernels.report(platform, shape, args.dtype):
        mark = "yes" if r["available"] else "no "
        print(f"  {r['name']:<10} {mark}  {r['summary']}")
        if r["note"]:
            print(f"  {'':<10}      {r['note']}")
    auto = kernels.get("auto", platform=platform, shape=shape, dtype=args.dtype)
    print(f"\nauto -> {auto.reason}")
    return 0


COMMANDS = {
    "run": cmd_run,
    "submit": cmd_submit,
    "estimate": cmd_estimate,
    "report": cmd_report,
    "kernels": cmd_kernels,
    "embed": cmd_embed,
}


def main(argv: list[str] | None = None) -> int:
    # On a machine without a TPU, libtpu (the tpu extra) is noisy at JAX start-up.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"docbeam: unknown command {command!r}\n\n{USAGE}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[command](rest)
    except BrokenPipeError:  # `docbeam embed ... | head`: the reader left; nothing to report
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
