"""Input globs -> the files they name, and the name each file's document ids derive from.

A document without an id of its own is named after its file *relative to the root of the
glob that matched it* (the folder before the first wildcard; a folder given as input is its
own root): `docs/*.jsonl` gives `a.jsonl#3`, not `/home/me/docs/a.jsonl#3`, so a local run,
a gs:// run and a colleague's checkout give the same ids for the same layout. The launcher
does the matching.

A local file name that is not UTF-8 reaches Python as text with surrogate escapes, which
Beam's coders (strict UTF-8) cannot carry: such a file travels as the bytes of its path and
becomes one errors/ line that shows the name with \\x escapes, never the end of the run.

What a local input holds besides files is skipped unread and counted by reason (`left_out`):
a link whose real path leaves its input's root (`link_outside_input`, a folder link
included: the listing never walks one) and a FIFO, socket or device (`special_file`).
"""

import functools
import os
import posixpath
import re
import stat
from dataclasses import dataclass

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.records import Rejection, reject

WILDCARDS = "*?["
# Skipped reasons of what a local input holds besides readable files (see `left_out`).
LINK_OUTSIDE_INPUT = "link_outside_input"
SPECIAL_FILE = "special_file"


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


def left_out(path: str, name: str | None, follow_links: bool = False) -> str | None:
    """Why the listed local file `path` (`name` under its input's root) is skipped unread (a
    Skipped reason), or None to read it. Decided on metadata alone, before anything opens it:
    opening a FIFO waits for a writer that never comes (a run hung at "2/2 files; reading"),
    and a device such as /dev/zero never ends."""
    if "://" in path:
        return None  # an object store holds objects: no links, FIFOs or devices
    if name is not None and not follow_links and leaves_root(path, name):
        return LINK_OUTSIDE_INPUT
    try:
        mode = os.stat(path).st_mode  # through links: a link to a FIFO is as bad as the FIFO
    except OSError:
        return None  # vanished meanwhile: opening it says why, as an error line
    if stat.S_ISDIR(mode):
        return LINK_OUTSIDE_INPUT  # listed only as a folder link that leaves the input: never walked
    return None if stat.S_ISREG(mode) else SPECIAL_FILE


def folder_links_outside(item: InputGlob) -> list[str]:
    """The links to folders outside `item`'s root that its pattern matches. The listing (Beam's
    local match) walks folders without following links, so such a link would vanish from the
    run without a word: it is listed itself instead, size 0, for `left_out` to skip and count.
    A link to a folder inside the root adds nothing: its files are listed where they lie."""
    from apache_beam.io.filesystem import FileSystem  # not at import: this module stays light

    if "://" in item.pattern or not (item.folder or has_wildcard(item.pattern)):
        return []
    matches = re.compile(FileSystem.translate_pattern(item.pattern)).match
    deepest = _deepest_match(item)
    found = []
    for folder, subfolders, _ in os.walk(item.root):
        for sub in subfolders:
            path = os.path.join(folder, sub)
            if matches(path) and os.path.islink(path) and leaves_root(path, name_of(path, item.root)):
                found.append(path)
        if deepest is not None and _depth(folder, item.root) >= deepest:
            subfolders.clear()  # nothing deeper can match: do not walk it
    return [p for p in found if not (item.folder and in_a_run(p, item.root))]


def _deepest_match(item: InputGlob) -> int | None:
    """How many folders below the root a match can lie (None: any, with `**`)."""
    if "**" in item.pattern:
        return None
    return item.pattern[len(item.root) :].strip("/").count("/")


def _depth(folder: str, root: str) -> int:
    rel = os.path.relpath(folder, root)
    return 0 if rel == "." else rel.count(os.sep) + 1
