"""The `docbeam` command: run, submit, estimate, report, kernels."""

import argparse
import os
import sys

USAGE = """docbeam <command> [options]

commands:
  run       run the job (DirectRunner by default) on --input, write the output contract to --output
  submit    the same job on Dataflow with TPU or GPU workers
  estimate  run a sample, project time and cost for the whole input
  report    print / re-render the cost report of a finished run
  kernels   which attention kernels this machine can run, and why not

`docbeam <command> --help` explains each one."""


def _quiet_jax() -> None:
    # On a machine without a TPU, libtpu (from the tpu extra) prints errors at JAX start-up.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def cmd_run(argv: list[str]) -> int:
    from apache_beam.options.pipeline_options import PipelineOptions  # noqa: F401

    from pipeline import run
    from pipeline.options import DocbeamOptions

    parser = argparse.ArgumentParser(
        prog="docbeam run",
        description="Embed documents (and extract, with --extract) into Parquet under --output. "
        "Any other Beam pipeline option (--runner, --direct_num_workers, ...) is passed through.",
    )
    DocbeamOptions._add_argparse_args(parser)
    if "-h" in argv or "--help" in argv:
        parser.print_help()
        return 0
    return run.main(argv)


def cmd_kernels(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="docbeam kernels", description=cmd_kernels.__doc__)
    parser.add_argument("--seq-len", type=int, default=256)
    parser.add_argument("--dtype", default="float32")
    args = parser.parse_args(argv)
    import kernels

    platform = kernels.platform_of_backend()
    shape = (32, args.seq_len, 12, 32)
    print(f"platform: {platform}; shape [batch, seq, heads, head_dim] = {list(shape)}, {args.dtype}\n")
    for r in kernels.report(platform, shape, args.dtype):
        mark = "yes" if r["available"] else "no "
        print(f"  {r['name']:<10} {mark}  {r['summary'] or ''}")
        if r["note"]:
            print(f"  {'':<10}      {r['note']}")
    auto = kernels.get("auto", platform=platform, shape=shape, dtype=args.dtype)
    print(f"\nauto -> {auto.reason}")
    return 0


cmd_kernels.__doc__ = "List every attention implementation, whether it runs here and why not."

COMMANDS = {"run": cmd_run, "kernels": cmd_kernels}


def main(argv: list[str] | None = None) -> int:
    _quiet_jax()
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
