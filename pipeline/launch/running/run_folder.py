"""What docbeam may write to and delete under --output (local or gs://).

docbeam deletes only files it can show it wrote: the folder carries the run marker
(`_docbeam_run.json`, written when a run starts, with the run's id) or, for runs made before
the marker, docbeam's `_manifest.json` (a finished run) or `_job.json` (an interrupted one);
and each file to delete has a name docbeam gives its files. Anything else under the run's
folders is refused with one line and nothing is deleted: `--overwrite` or `--resume` pointed
at the wrong folder must not cost anyone their files.

No Beam or JAX here: `docbeam run` checks a local --output with it before they load.
"""

import datetime as dt
import errno
import json
import os
import re
import tempfile
import uuid

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.cost.report import FILES as REPORT_FILES
from docbeam.pipeline.io import storage

MARKER = tables.RUN_MARKER

# Table files: Beam's shards <prefix>-NNNNN-of-NNNNN<suffix> (the prefix is a wave key, or
# "part"), and the beam-temp-* folders a killed write leaves behind.
_TABLE_FILE = re.compile(r"(part|w[0-9a-f]{10})-\d+-of-\d+\.(parquet|jsonl)")
_BEAM_TEMP = re.compile(r"beam-temp-(part|w[0-9a-f]{10})-[0-9a-f]{32}/[^/]+")


def owned(rel: str, nested: bool = True) -> bool:
    """Whether `rel`, a path relative to the output, is a name docbeam gives its files."""
    head, _, base = rel.rpartition("/")
    tmp = re.fullmatch(r"\.(.+)\.[a-z0-9_]+\.tmp", base)
    if tmp:  # storage.write_bytes' temporary file, left by a process killed mid-write
        return owned(f"{head}/{tmp.group(1)}" if head else tmp.group(1), nested)
    top, _, rest = rel.partition("/")
    if not rest:
        return top in tables.RUN_FILES
    if top in tables.DATA_TABLES:
        return bool(_TABLE_FILE.fullmatch(rest) or _BEAM_TEMP.fullmatch(rest))
    if top == tables.COST:
        return rest in REPORT_FILES
    if top == tables.PROGRESS:
        return bool(re.fullmatch(r"w[0-9a-f]{10}\.json", rest))
    if top == tables.INDEX:
        return rest in tables.INDEX_FILES
    if top == tables.REMOVED:
        return rest.split(".")[0] == "doc_ids" and "/" not in rest
    if top == tables.SINK_ERRORS:
        return bool(re.fullmatch(r"[a-z]+-[0-9a-f]{16}\.jsonl", rest))
    if top == tables.BUDGET_SAMPLE and nested:  # the sample is a run of its own, one level down
        return owned(rest, nested=False)
    return False


def _json_object(path: str) -> dict:
    """The JSON object at `path`; {} when there is none (GCS answers NotFound, not OSError)."""
    if not storage.exists(path):
        return {}
    try:
        value = json.loads(storage.read_text(path))
    except (OSError, UnicodeDecodeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def is_run(output: str) -> bool:
    """The folder holds a docbeam run: the marker, or (runs before the marker) the manifest of
    a finished run or the job record of an interrupted one, each in docbeam's own shape."""
    if "run_id" in _json_object(tables.join(output, MARKER)):
        return True
    manifest = _json_object(tables.join(output, tables.MANIFEST))
    if {"counts", "accounting"} <= manifest.keys():
        return True
    return {"argv", "wave"} <= _json_object(tables.join(output, tables.JOB_RECORD)).keys()


def files(output: str) -> list[str]:
    """Every file under the folders and names a run writes (what --overwrite would replace)."""
    found = [p for folder in tables.RUN_FOLDERS for p in storage.list_prefix(tables.folder(output, folder))]
    return found + [p for f in tables.RUN_FILES if storage.exists(p := tables.join(output, f))]


def _not_a_run(output: str, paths: list[str], flag: str) -> UsageError:
    base = output.rstrip("/") + "/"
    where = sorted({p[len(base) :].split("/")[0] for p in paths if p.startswith(base)})
    why = f"no {MARKER} or {tables.MANIFEST}"
    if storage.exists(tables.join(output, tables.MANIFEST)):
        why = f"no {MARKER}, and its {tables.MANIFEST} is not docbeam's"
    return UsageError(
        f"{flag}: {output} is not a docbeam run ({why}) and holds {len(paths)} file(s) "
        f"in {', '.join(where)}; docbeam deletes only files it wrote, so nothing was deleted "
        "(choose another --output, or move those files)"
    )


def check_output(output: str, overwrite: bool, resume: bool) -> list[str]:
    """Refuse (UsageError, one line) an --output docbeam cannot write in, or one that holds
    files it must neither mix with nor delete; returns the files --overwrite replaces."""
    check_writable(output)
    check_no_links(output)
    old = files(output)
    # Only the marker: a start that was refused (--budget-usd) or failed before writing anything.
    if not old or old == [tables.join(output, MARKER)]:
        return []
    if not is_run(output):
        raise _not_a_run(output, old, "--resume" if resume else "--overwrite" if overwrite else "--output")
    if not (overwrite or resume):
        raise UsageError(
            f"{output} already holds a run's outputs ({len(old)} files); "
            "pass --overwrite to replace them (or --resume to continue that run)"
        )
    return old


def check_no_links(output: str) -> None:
    """UsageError (before anything is listed, written or deleted) when a run's folder or file
    under a local --output is a symbolic link, or anything inside a run folder is: docbeam
    writes and deletes only real files inside the real --output, never where a link leads
    (--overwrite would delete there, a new run write there). --output itself may be a link."""
    if storage.is_gcs(output) or "://" in output or not os.path.isdir(output):
        return
    root = os.path.realpath(output)
    names = [*tables.RUN_FOLDERS, *tables.RUN_FILES]
    for name in names:
        path = os.path.join(output, name)
        _refuse_link(output, path, root)
        if os.path.isdir(path):
            for folder, dirs, found in os.walk(path):  # followlinks=False: a link is seen, not entered
                for entry in [*dirs, *found]:
                    _refuse_link(output, os.path.join(folder, entry), root)


def _refuse_link(output: str, path: str, root: str) -> None:
    if os.path.islink(path):
        where = os.path.realpath(path)
        inside = "" if os.path.commonpath([root, where]) != root else ", inside it"
        raise UsageError(
            f"--output {output}: {os.path.relpath(path, output)} is a link (to {where}{inside}); docbeam writes and "
            "deletes only real files inside --output, so nothing was written or deleted (remove the link)"
        )


def check_can_delete(output: str, paths: list[str], flag: str) -> None:
    """UsageError (and nothing deleted) unless every one of `paths` is a file docbeam wrote."""
    if not paths:
        return
    if not is_run(output):
        raise _not_a_run(output, paths, flag)
    base = output.rstrip("/") + "/"
    foreign = [p for p in paths if not (p.startswith(base) and owned(p[len(base) :]))]
    if foreign:
        raise UsageError(
            f"{flag}: {foreign[0]} is not a file docbeam writes ({len(foreign)} such file(s) in the run's folders); "
            "nothing was deleted (move them, or choose another --output)"
        )


def mark(output: str) -> str:
    """Write the marker of a new run (or keep a resumed run's); returns the run's id."""
    path = tables.join(output, MARKER)
    current = _json_object(path).get("run_id")
    if current:
        return current
    run_id = uuid.uuid4().hex
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    storage.write_text(path, json.dumps({"run_id": run_id, "started": started, "written_by": "docbeam"}, indent=1))
    return run_id


def unmark(output: str) -> None:
    """Remove the marker of a run that refused to start, when it is all the run wrote."""
    marker = tables.join(output, MARKER)
    if files(output) == [marker]:
        storage.delete(marker)


def run_id(output: str) -> str | None:
    return _json_object(tables.join(output, MARKER)).get("run_id")


def check_writable(output: str) -> None:
    """A local --output must be, or be creatable as, a folder docbeam can write in: one line
    (UsageError) instead of an OSError from deep inside the run. gs:// is checked by writing."""
    if storage.is_gcs(output) or "://" in output:
        return
    path = os.path.abspath(output)
    existing = path
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise UsageError(f"--output {output}: {existing} is a file, not a folder")
    try:  # a real probe: permissions, read-only file systems and /proc all answer the same way
        os.rmdir(tempfile.mkdtemp(prefix=".docbeam-probe-", dir=existing))
    except OSError as exc:
        why = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
        raise UsageError(f"--output {output}: cannot write in {existing} ({why})") from None
