"""What `docbeam run` checks on local paths before Beam and JAX load (seconds of imports),
so that an --output it cannot use or an --input that matches nothing answers at once, in one
line, like a misspelt flag. The job checks the same again, gs:// included (planner, job).
"""

import argparse
import fnmatch
import os
import re

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.ingest.sources import has_wildcard
from docbeam.pipeline.launch.running import run_folder


def _matches_nothing(pattern: str) -> bool:
    """True only when Beam's local match of `pattern` is surely empty. Beam lists the folder
    before the first wildcard recursively and matches each path against the pattern, `*`
    within a folder and `**` across folders; fnmatch's `*` matches across folders, so it
    matches at least what Beam does, and no fnmatch match means no Beam match."""
    if not has_wildcard(pattern):
        return not os.path.exists(pattern)
    prefix = re.match(r"[^[*?]*", pattern).group(0)  # type: ignore[union-attr]
    root = os.path.dirname(prefix) or "."
    # Without `**`, `?` or `[` (which can match a "/"), Beam matches only paths as deep as the
    # pattern: no need to walk below that (`/tmp/x-*.jsonl` must not walk all of /tmp).
    rest = pattern[len(root) :]
    depth = rest.count("/") if not any(c in rest for c in ("**", "?", "[")) else None
    for folder, subfolders, names in os.walk(root):
        if any(fnmatch.fnmatchcase(os.path.join(folder, n), pattern) for n in names):
            return False
        if depth is not None and folder[len(root) :].count("/") + 1 >= depth:
            subfolders.clear()
    return True


def check_inputs(args: list[str]) -> None:
    """--input arguments that are local and match no file: the planner's one line, early."""
    empty = []
    for arg in args:
        if "://" in arg:
            continue
        path = os.path.abspath(arg)
        pattern = f"{path.rstrip('/')}/**" if not has_wildcard(path) and os.path.isdir(path) else path
        if _matches_nothing(pattern):
            empty.append(pattern)
    if empty:
        raise UsageError(f"--input matches no files: {', '.join(empty)}")


def check(ns: argparse.Namespace) -> None:
    """The checked command line of a job (core.command_line.check_job_args)."""
    check_inputs(ns.input or [])
    if ns.output and "://" not in ns.output:
        run_folder.check_output(ns.output, overwrite=ns.overwrite, resume=ns.resume)
