"""The int8 calibration ranges across a run's waves, and the manifest's `vectors` record.

The first wave that calibrates (graph.vector_output) writes its ranges beside its outputs; the
launcher keeps them as the run's (io.vector_ranges) before it commits the wave, and every later
wave, a --resume included, quantises with those: one set of ranges decodes every code."""

import json

import numpy as np

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.vector_format import INT8, RANGES_FILE
from docbeam.pipeline.graph.job_plan import JobPlan
from docbeam.pipeline.graph.vector_output import VECTOR_TABLES, ranges_prefix
from docbeam.pipeline.io import storage, vector_ranges


def for_wave(plan: JobPlan) -> dict | None:
    """The ranges a wave must use: the plan's (a reused run's), else the run's own kept by an
    earlier wave, else None (the wave calibrates)."""
    if plan.vector_format.dtype != INT8:
        return None
    if plan.vector_ranges is not None:
        return plan.vector_ranges
    kept = vector_ranges.read(plan.output)
    return None if kept is None else {t: np.asarray(r).tolist() for t, r in kept.items()}


def calibrated(folder: str) -> dict | None:
    """The int8 ranges a job under `folder` calibrated (the --budget-usd sample's): the run's file
    if written, else the first wave's own files; None when there are none."""
    kept = vector_ranges.read(folder)
    if kept is None:
        found = {}
        listed = sorted(storage.list_prefix(tables.folder(folder, tables.VECTORS)))
        for table in VECTOR_TABLES:
            mine = [p for p in listed if p.endswith(f"-{table}-ranges.json")]
            if mine:
                found[table] = json.loads(storage.read_text(mine[0]).strip())
        return found or None
    return {t: np.asarray(r).tolist() for t, r in kept.items()}


def keep(plan: JobPlan, wave_key: str) -> None:
    """After a wave's job: the run's ranges file, from the plan's fixed ranges or this wave's
    calibration, unless an earlier wave wrote it."""
    if plan.vector_format.dtype != INT8 or storage.exists(vector_ranges.path(plan.output)):
        return
    found = {t: np.asarray(r, np.float32) for t, r in (plan.vector_ranges or {}).items()}
    for table in VECTOR_TABLES:
        path = ranges_prefix(plan.output, wave_key, table) + ".json"
        if table not in found and storage.exists(path):
            found[table] = np.asarray(json.loads(storage.read_text(path).strip()), np.float32)
    if found:
        vector_ranges.write(plan.output, found)


def record(plan: JobPlan) -> dict:
    """The manifest's `vectors`: model_dim, dims, dtype, bytes per vector; int8: the ranges and
    the file holding them."""
    fmt = plan.vector_format
    out = fmt.record()
    if fmt.dtype == INT8:
        kept = vector_ranges.read(plan.output) or {}
        out["int8_ranges"] = {t: np.asarray(r, np.float32).tolist() for t, r in kept.items()}
        out["ranges_file"] = RANGES_FILE
    return out
