"""What search reads of a run folder it did not write and need not trust (a bucket, an archive).

A local folder may hold links and special files. Search reads only regular files whose real
path stays under the run's real path: a chunk file linked to a Parquet elsewhere would print
that file's text as hits, and a FIFO would block the reader, or feed it without end. Each file
is checked where it is listed, before it is opened. gs:// objects are neither links nor special
files: they pass as listed. JSON files (the manifest, the index record) are read up to a bound.
"""

import json
import os
import stat

from docbeam.pipeline.io import storage

# A manifest is a few KiB (it does not grow with the run), an index record less: anything near
# this is not docbeam's, and reading further would only fill memory.
MAX_JSON_BYTES = 16 << 20

_SPECIAL = (
    (stat.S_ISDIR, "folder"),
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISSOCK, "socket"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
)


class RunError(ValueError):
    """RUN is no finished docbeam run that search can read (one line naming the file and why)."""


def regular_inside(run: str, path: str) -> str:
    """`path`, refused unless it is a regular file whose real path is under `run`'s real path
    (a link that stays inside the run is followed). Nothing is opened: a FIFO is refused unread."""
    if storage.is_gcs(path):
        return path
    real, root = os.path.realpath(path), os.path.realpath(run)
    if os.path.commonpath([real, root]) != root:
        raise RunError(f"{path}: resolves to {real}, outside the run; search reads only files inside {run}")
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:  # a dangling link, a file gone since it was listed
        raise RunError(f"{path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _SPECIAL if test(mode)), "special file")
        raise RunError(f"{path}: a {kind}, not a regular file; search reads only regular files")
    return path


def read_bounded(path: str, limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of `path`, refused past `limit` after reading at most `limit` + 1 of them (on
    gs://, one ranged read)."""
    try:
        with storage.open_read(path, buffer_bytes=min(limit + 1, 4 << 20)) as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise RunError(f"{path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise RunError(f"{path}: larger than {limit / 2**20:g} MiB; docbeam never writes one that large")
    return data


def json_object(path: str, limit: int = MAX_JSON_BYTES) -> dict:
    """The JSON object in `path` (read_bounded), refused in one line when it is not one."""
    data = read_bounded(path, limit)
    try:
        value = json.loads(data)
    except RecursionError:  # json's parser recurses once per level of nesting
        raise RunError(f"{path}: JSON nested too deep") from None
    except ValueError as exc:  # not JSON, or not UTF-8
        raise RunError(f"{path}: not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise RunError(f"{path}: a JSON {type(value).__name__}, not an object")
    return value
