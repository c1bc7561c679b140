"""Waves: commit a job's outputs group of input files by group, so a killed run can resume.

A wave is one Beam job over a group of input files; its files land in the table folders
under the wave's key (documents/<key>-part-...). Only after that job has finished, that is
after Beam's sinks finalised (renamed) every file, the launcher writes _progress/<key>.json
with the wave's input files, metrics and wall time. That record is the commit.

On --resume, the files of committed waves are skipped, and every output file no committed
wave owns (the remains of the wave that was killed) is deleted first: nothing duplicated.
doc_ids stay unique across waves: each wave joins its documents against the doc_ids
already committed, and a repeat is rejected as a duplicate (the earlier wave keeps it).
Each record holds the run's settings: --resume with other settings is refused (check_settings).
"""

import hashlib
import json
from dataclasses import dataclass

from docbeam.pipeline.core import fingerprint, tables
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.io import storage
from docbeam.pipeline.launch.running import run_folder


@dataclass(frozen=True)
class Wave:
    key: str
    inputs: list[str]  # globs (one wave over everything) or explicit file paths


def key_of(inputs: list[str]) -> str:
    # surrogateescape: a local file name that is not UTF-8 still has a key (its bytes)
    return "w" + hashlib.sha1("\n".join(sorted(inputs)).encode("utf-8", "surrogateescape")).hexdigest()[:10]


def committed(output: str) -> list[dict]:
    prefix = tables.folder(output, tables.PROGRESS)
    return [json.loads(storage.read_text(p)) for p in storage.list_prefix(prefix) if p.endswith(".json")]


def commit(output: str, wave: Wave, files: list[str], totals: dict, wall: float, settings: dict | None = None) -> dict:
    """Write the wave's record, which commits it; returns the record."""
    record = {"key": wave.key, "inputs": wave.inputs, "files": files, "totals": totals, "wall_seconds": wall}
    if settings is not None:  # what the wave's outputs depend on: --resume checks it
        record["settings"] = settings
    text = json.dumps(record, indent=1, default=str)
    storage.write_text(tables.join(output, tables.PROGRESS, f"{wave.key}.json"), text)
    return record


def record_job(output: str, argv: list[str], wave: Wave, files: list[str] | None) -> None:
    """Written by the launcher before each wave's job starts (`files`: None for a glob wave)."""
    record = {"argv": argv, "wave": wave.key, "inputs": wave.inputs, "files": files}
    storage.write_text(tables.join(output, tables.JOB_RECORD), json.dumps(record, indent=1))


def check_settings(output: str, records: list[dict], settings: dict) -> None:
    """--resume continues a run only with the settings its committed waves were made with
    (both fingerprints: the vectors' and the extractions'), else outputs of two settings would
    mix. Records from before they held settings fall back to a finished run's manifest."""
    stored = [r["settings"] for r in records if "settings" in r]
    path = tables.join(output, tables.MANIFEST)
    if records and not stored and storage.exists(path):
        stored = [json.loads(storage.read_text(path)).get("settings", {}).get("values")]
    for before in filter(None, stored):
        vectors, extractions = fingerprint.changed_parts(before, settings)
        if vectors or extractions:
            raise UsageError(
                f"--resume {output}: its committed waves were made with other settings "
                f"({'; '.join(vectors + extractions)}); give that run's flags, or a new --output "
                f"(with --reuse {output} to copy what still holds)"
            )


def owned_by(path: str, keys: set[str]) -> bool:
    return path.rsplit("/", 1)[-1].split("-", 1)[0] in keys


def remove_uncommitted(output: str, records: list[dict]) -> list[str]:
    """Delete every table file that no committed wave owns; returns what was deleted."""
    keys = {r["key"] for r in records}
    stale = [
        p for t in tables.DATA_TABLES for p in storage.list_prefix(tables.folder(output, t)) if not owned_by(p, keys)
    ]
    run_folder.check_can_delete(output, stale, "--resume")  # nothing is deleted unless docbeam wrote all of it
    for p in stale:
        storage.delete(p)
    return stale


def document_files(output: str, records: list[dict]) -> list[str]:
    keys = {r["key"] for r in records}
    return [
        p
        for p in storage.list_prefix(tables.folder(output, tables.DOCUMENTS))
        if p.endswith(".parquet") and owned_by(p, keys)
    ]


def plan(globs: list[str], files: list[str] | None, wave_files: int, records: list[dict]) -> list[Wave]:
    """The waves still to run. `files` is the listing of `globs` (None: not listed, one wave)."""
    if files is None:
        return [Wave(key_of(globs), list(globs))]
    done = {f for r in records for f in r["files"]}
    pending = [f for f in files if f not in done]
    size = wave_files or len(pending) or 1
    return [Wave(key_of(pending[i : i + size]), pending[i : i + size]) for i in range(0, len(pending), size)]


GAUGES = {
    "peak_rss_bytes",
    "rss_bytes",
    "rss_growth_bytes",
    "rss_leak_bytes",
    "device_bytes",
    "device_growth_bytes",
    "device_leak_bytes",
}


def merge_totals(all_totals: list[dict]) -> dict:
    """Stage metrics of several waves: counters add up, gauges (memory) take the maximum."""
    out: dict[str, dict] = {}
    for totals in all_totals:
        for stage, metrics in totals.items():
            mine = out.setdefault(stage, {})
            for name, value in metrics.items():
                mine[name] = max(mine.get(name, 0), value) if name in GAUGES else mine.get(name, 0) + value
    return out
