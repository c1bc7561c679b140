"""The plain Beam entry point: `python -m pipeline.run --input GLOB --output DIR [...]`.

Used by Airflow and Dataflow; the same job as `docbeam run` (launch.console.run_main).
"""

import sys

from pipeline.launch.console import run_main


def main(argv: list[str] | None = None) -> int:
    return run_main(sys.argv[1:] if argv is None else argv, "python -m pipeline.run")


if __name__ == "__main__":
    sys.exit(main())
