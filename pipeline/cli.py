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
  models    the architectures, pooling modes and model families docbeam reads

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


def cmd_kernels(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="docbeam kernels", description="List every attention implementation, whether it runs here and why not."
    )
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--window", type=int, default=None, help="a local window (tokens either side), e.g. 64")
    args = parser.parse_args(argv)
    import kernels

    platform = kernels.platform_of_backend()
    shape = (max(1, min(32, 8192 // args.seq_len)), args.seq_len, 12, 32)
    window = "" if args.window is None else f", local window {args.window}"
    print(f"platform: {platform}; shape [batch, seq, heads, head_dim] = {list(shape)}, {args.dtype}{window}\n")
    for r in kernels.report(platform, shape, args.dtype, args.window):
        mark = "yes" if r["available"] else "no "
        print(f"  {r['name']:<10} {mark}  {r['summary']}")
        if r["note"]:
            print(f"  {'':<10}      {r['note']}")
    auto = kernels.get("auto", platform=platform, shape=shape, dtype=args.dtype, window=args.window)
    print(f"\nauto -> {auto.reason}")
    return 0


FAMILIES = [
    # (family, architecture, pooling, example --model): see docs/models.md
    ("all-MiniLM / all-mpnet-style BERT", "bert", "mean + Normalize", "sentence-transformers/all-MiniLM-L6-v2"),
    ("bge (English)", "bert", "cls + Normalize", "BAAI/bge-small-en-v1.5"),
    ("e5 (query:/passage: prompts)", "bert", "mean + Normalize", "intfloat/e5-small-v2"),
    ("multilingual-e5", "xlm-roberta", "mean + Normalize", "intfloat/multilingual-e5-small"),
    ("paraphrase-multilingual", "xlm-roberta", "mean", "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"),
    ("bge-m3 (8,192 positions)", "xlm-roberta", "cls + Normalize", "BAAI/bge-m3"),
    ("ModernBERT embeddings (8,192)", "modernbert", "mean", "nomic-ai/modernbert-embed-base"),
]


def cmd_models(argv: list[str]) -> int:
    argparse.ArgumentParser(
        prog="docbeam models", description="The architectures, pooling modes and model families docbeam reads."
    ).parse_args(argv)
    from model import ARCHITECTURES, POOLING_MODES

    print("architectures (config.json model_type):")
    for name, module in ARCHITECTURES.items():
        print(f"  {name:<12} {module.__doc__.strip().splitlines()[0]}")
    print(f"\npooling modes (sentence-transformers Pooling; several concatenate): {', '.join(POOLING_MODES)}")
    print("then any Dense layers (tanh, identity, relu, gelu, sigmoid) and Normalize, as modules.json lists them;")
    print("prompts from config_sentence_transformers.json (documents: document/passage/corpus; --prompt-name)")
    print("\n--model: a directory, a gs:// prefix, or a Hugging Face hub id ORG/NAME[@REVISION] (safetensors only)")
    print("\nfamilies that work (one line each):")
    for family, arch, pooling, repo in FAMILIES:
        print(f"  {family:<32} {arch:<12} {pooling:<18} docbeam run --input 'docs/*' --output out --model {repo}")
    return 0


COMMANDS = {
    "run": cmd_run,
    "submit": cmd_submit,
    "estimate": cmd_estimate,
    "report": cmd_report,
    "kernels": cmd_kernels,
    "models": cmd_models,
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
    return COMMANDS[command](rest)


if __name__ == "__main__":
    sys.exit(main())
