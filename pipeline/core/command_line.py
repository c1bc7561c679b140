"""Checking a command line before Beam and JAX load: a mistake answers at once, in one line.

Every docbeam flag and every Beam pipeline option (core.beam_flags) is known here, so a
misspelt flag is an error with a suggestion ("did you mean --extract?") instead of a Beam
warning followed by a run without it; Beam's own options pass through untouched.
"""

import argparse
import difflib
from collections.abc import Callable

from docbeam.pipeline.core.beam_flags import BEAM_FLAGS
from docbeam.pipeline.core.flags import UsageError, add_job_flags, docbeam_flag_names


class Parser(argparse.ArgumentParser):
    """argparse that raises UsageError (one line) instead of printing usage and exiting 2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message: str):
        raise UsageError(message)


def add_beam_flags(parser: argparse.ArgumentParser) -> None:
    """Beam's options, accepted as given and left out of --help (Beam documents them)."""
    taken = {o for a in parser._actions for o in a.option_strings}
    for flag, (dest, takes_value) in BEAM_FLAGS.items():
        if flag in taken:
            continue
        if takes_value:
            parser.add_argument(flag, dest=f"beam.{dest}", action="append", help=argparse.SUPPRESS)
        else:
            parser.add_argument(flag, dest=f"beam.{dest}", action="store_true", help=argparse.SUPPRESS)


def suggest(flag: str, extra: list[str] | None = None) -> str:
    """' (did you mean --x?)' for the closest known flag, docbeam's own first, or ''."""
    name = flag.split("=", 1)[0]
    for candidates in (docbeam_flag_names() + (extra or []), list(BEAM_FLAGS)):
        close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
        if close:
            return f" (did you mean {close[0]}?)"
    return ""


def check_job_args(
    argv: list[str],
    prog: str,
    required: tuple[str, ...] = ("input", "output"),
    more: Callable[[argparse.ArgumentParser], None] | None = None,
    description: str = "",
) -> argparse.Namespace:
    """Parse a job's command line (docbeam flags, `more` of the command's own, Beam options);
    UsageError naming the first problem. Nothing of Beam or JAX is imported. `-h` prints the
    help and exits 0."""
    parser = Parser(
        prog=prog,
        description=description,
        epilog=(
            "Beam's own pipeline options (--runner, --direct_num_workers, --project, ...) pass through. "
            "Environment: DOCBEAM_COMPILE_CACHE (compiled encoders kept here; default ~/.cache/docbeam/xla, "
            "'off' disables), DOCBEAM_PROGRESS_SECONDS (progress line interval off a terminal, default 30), "
            "DOCBEAM_CPU_DEVICES (XLA devices a local CPU is split into; default one per core, up to 4)."
        ),
    )
    add_job_flags(parser, required=required)
    if more:
        more(parser)
    own = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
    add_beam_flags(parser)
    # Unknown flags first: "--inptu x" is a typo to name, not a missing --input.
    asks_help = any(a in ("-h", "--help") for a in argv)
    needed = [a for a in parser._actions if a.required and not asks_help]  # --help shows them required
    for a in needed:
        a.required = False
    ns, rest = parser.parse_known_args(argv)
    if rest:
        first = rest[0]
        if first.startswith("-"):
            raise UsageError(f"unknown flag {first.split('=', 1)[0]}{suggest(first, own)}")
        raise UsageError(f"unexpected argument {first!r} (flags take the form --name VALUE)")
    missing = [a.option_strings[0] for a in needed if getattr(ns, a.dest) in (None, [])]
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join(missing)}")
    return ns


def without_own_flags(argv: list[str], add_flags: Callable[[argparse.ArgumentParser], None]) -> list[str]:
    """`argv` less the flags `add_flags` defines (a command's own), in order: the job's flags."""
    parser = Parser(add_help=False)
    add_flags(parser)
    return parser.parse_known_args(argv)[1]
