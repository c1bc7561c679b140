"""A run's int8 calibration ranges (`--vector-dtype int8`): _vectors/int8_ranges.json under
--output, per table [[minima], [maxima]] (core.vector_format.RANGES_FILE), read by search, the
sinks and later waves; the manifest holds a copy."""

import json

import numpy as np

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.vector_format import RANGES_FILE, ranges_of_record, ranges_record
from docbeam.pipeline.io import storage


def path(output: str) -> str:
    return tables.join(output, RANGES_FILE)


def read(output: str) -> dict[str, np.ndarray] | None:
    """table -> [2, dim] float32, or None when the run has no ranges file."""
    where = path(output)
    if not storage.exists(where):
        return None
    return ranges_of_record(json.loads(storage.read_text(where)))


def write(output: str, ranges: dict[str, np.ndarray]) -> dict:
    """Write the run's ranges; returns them as the manifest records them."""
    record = ranges_record(ranges)
    storage.write_text(path(output), json.dumps(record))
    return record
