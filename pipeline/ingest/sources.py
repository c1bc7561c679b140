"""Input globs -> the files they name, and the name each file's document ids derive from.

A document without an id of its own is named after its file *relative to the root of the
glob that matched it* (the folder before the first wildcard; a folder given as input is its
own root): `docs/*.jsonl` gives `a.jsonl#3`, not `/home/me/docs/a.jsonl#3`, so a local run,
a gs:// run and a colleague's checkout give the same ids for the same layout. The launcher
does the matching.

A local file name that is not UTF-8 reaches Python as text with surrogate escapes, which
Beam's coders (strict UTF-8) cannot carry: such a file travels as the bytes of its path and
becomes one errors/ line that shows the name with \\x escapes, never the end of the run.
"""

import functools
import os
import posixpath
from dataclasses import dataclass

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.records import Rejection, reject

WILDCARDS = "*?["


@dataclass(frozen=True)
class InputGlob:
    pattern: str  # what to match (a folder becomes FOLDER/**)
    root: str  # ids are relative to this folder
    folder: bool = False  # given as a folder: read the files of supported formats under it, skip the rest


def has_wildcard(path: str) -> bool:
    return any(c in path for c in WILDCARDS)


def glob_root(pattern: str) -> str:
    """The folder before the first wildcard (for a plain path: its folder)."""
    cut = min((pattern.find(c) for c in WILDCARDS if c in pattern), default=len(pattern))
    return posixpath.dirname(pattern[:cut]) if cut < len(pattern) else posixpath.dirname(pattern)


def for_glob(pattern: str) -> InputGlob:
    return InputGlob(pattern, glob_root(pattern))


def for_folder(path: str) -> InputGlob:
    folder = path.rstrip("/")
    return InputGlob(f"{folder}/**", folder, folder=True)


def in_a_run(path: str, root: str) -> bool:
    """Whether `path`, found under the folder input `root`, lies in a docbeam run's output (a
    folder holding the run marker or a manifest): a run written beside its corpus, or into the
    input folder itself, is not more corpus (its Parquet and report would come back as documents)."""
    folder = posixpath.dirname(path)
    top = root.rstrip("/")
    # A run written into the input folder itself: its own folders and files, not the corpus beside them.
    first = path[len(top) + 1 :].split("/", 1)[0] if path.startswith(top + "/") else ""
    if first in (*tables.RUN_FOLDERS, *tables.RUN_FILES) and _holds_a_run(top):
        return True
    while len(folder) > len(top) and folder.startswith(top + "/"):
        if _holds_a_run(folder):
            return True
        folder = posixpath.dirname(folder)
    return False


@functools.lru_cache(maxsize=4096)
def _holds_a_run(folder: str) -> bool:
    from docbeam.pipeline.io import storage  # not at import: this module stays light

    return any(storage.exists(tables.join(folder, name)) for name in (tables.RUN_MARKER, tables.MANIFEST))


def name_of(path: str, root: str) -> str:
    """`path` relative to `root` (both local absolute paths or both gs:// URLs)."""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else posixpath.basename(path)


def relabel(doc_id: str, path: str, name: str) -> str:
    """An id derived from the file's path ("PATH", "PATH#ROW") re-derived from its name."""
    if doc_id == path:
        return name
    if doc_id.startswith(path + "#"):
        return name + doc_id[len(path) :]
    return doc_id


def carried(path: str) -> str | bytes:
    """`path` as Beam can carry it: itself when it is UTF-8, else the bytes of the name."""
    try:
        path.encode("utf-8")
        return path
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape")


def printable(path: str | bytes) -> str:
    """`path` as valid UTF-8 text: a byte that is not UTF-8 is written as \\xNN."""
    raw = path if isinstance(path, bytes) else path.encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace")


def unreadable_name(path: bytes, name: str, stage: str) -> Rejection:
    """The errors/ line of a file whose name is not UTF-8 (see `carried`)."""
    problem = "the file name is not valid UTF-8 (shown with \\x escapes); rename the file to read it"
    return reject(stage, "non_utf8_name", printable(path), problem, doc_id=printable(name))


def leaves_root(path: str, name: str) -> bool:
    """Whether the local file `path` (`name` under its input's root) resolves through a link
    to something outside that root: a link to /etc/shadow in a corpus folder is no document."""
    if "://" in path or not path.endswith(name):
        return False
    root = os.path.realpath(path[: len(path) - len(name)] or "/")
    return os.path.commonpath([os.path.realpath(path), root]) != root
