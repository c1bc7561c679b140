"""The plain Beam entry point: `python -m docbeam.pipeline.run --input GLOB --output DIR [...]`.

Used by Airflow and Dataflow, and by `docbeam run`. The command line is checked before Beam
and JAX load (a mistake answers at once, in one line, exit 2); the work is launch.running.job's.
"""

import sys

from docbeam.pipeline.core import interrupt
from docbeam.pipeline.core.command_line import check_job_args
from docbeam.pipeline.core.exit_status import ExitStatus
from docbeam.pipeline.core.flags import RUN_DESCRIPTION, UsageError


def main(argv: list[str] | None = None, prog: str = "python -m docbeam.pipeline.run") -> int:
    argv = sys.argv[1:] if argv is None else argv
    interrupt.install()
    try:
        ns = check_job_args(argv, prog, description=RUN_DESCRIPTION)
        from docbeam.pipeline.launch.planning import preflight  # local --input and --output, still before Beam

        preflight.check(ns)
    except UsageError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    if (getattr(ns, "beam.runner", None) or ["DirectRunner"])[-1] in ("DirectRunner", "direct"):
        from docbeam.pipeline.graph import host_pool

        # The pool's processes import the host stages' code while this one imports Beam and JAX.
        host_pool.warm(ns.host_processes)
    from docbeam.pipeline.core.sink_uri import redacted_output

    try:
        with interrupt.held():  # Beam and JAX load here, after the check
            from docbeam.pipeline.launch.display.console import run_main
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return ExitStatus.INTERRUPTED

    with redacted_output(argv):  # every line printed, Beam's and the store clients' too
        return run_main(argv, prog)


if __name__ == "__main__":
    sys.exit(main())
