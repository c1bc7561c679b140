"""Input globs -> the files they name, and the name each file's document ids derive from.

A document without an id of its own is named after its file *relative to the root of the
glob that matched it* (the folder before the first wildcard; a folder given as input is its
own root): `docs/*.jsonl` gives `a.jsonl#3`, not `/home/me/docs/a.jsonl#3`, so a local run,
a gs:// run and a colleague's checkout give the same ids for the same layout. Pure: the
launcher does the matching.
"""

import posixpath
from dataclasses import dataclass

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
