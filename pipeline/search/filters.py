"""`docbeam search --where FIELD=VALUE`: which chunks of a run a search may return.

Fields: `language` (the document's detected language), `doc_id` (a prefix of the doc_id),
`section` (the chunk's section heading, exactly), and any other name: a field of the
document's `metadata` (the input record's other fields; `metadata.NAME` says the same), equal
to VALUE as text (a list matches when one of its items does). The same field given twice
matches either value; different fields must all match. A field no document of the run has is
refused (a misspelt name would otherwise read as "nothing matches").
"""

import json
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pyarrow.parquet as pq

from docbeam.pipeline.core import tables
from docbeam.pipeline.io import outputs, storage
from docbeam.pipeline.search.run_chunks import RunChunks
from docbeam.pipeline.search.run_files import RunError, regular_inside

CHUNK_FIELDS = ("doc_id", "section")  # read from chunks/
DOCUMENT_FIELDS = ("language",)  # read from documents/; every other field: metadata


@dataclass(frozen=True)
class Where:
    field: str
    value: str


def parse(text: str) -> Where:
    """'FIELD=VALUE' (VALUE may hold '='); ValueError naming the problem."""
    name, eq, value = text.partition("=")
    name = (
        name.strip().removeprefix("metadata.") if name.strip() not in CHUNK_FIELDS + DOCUMENT_FIELDS else name.strip()
    )
    if not eq or not name:
        raise ValueError(
            f"--where {text!r}: expected FIELD=VALUE (language=en, doc_id=PREFIX, section=..., a metadata field)"
        )
    return Where(name, value)


def _matches(value: object, wanted: str) -> bool:
    if isinstance(value, list):
        return any(_matches(v, wanted) for v in value)
    if isinstance(value, bool):
        return str(value).lower() == wanted.lower()
    return value is not None and str(value) == wanted


def _read(chunks: RunChunks, table: str, columns: list[str]):
    found = []
    for path in outputs.files(chunks.run, table, ".parquet"):
        with storage.open_read(regular_inside(chunks.run, path)) as fh:
            pf = pq.ParquetFile(fh)
            found.append(pf.read(columns=[c for c in columns if c in pf.schema_arrow.names]).to_pydict())
    return found


def chunk_doc_ids(chunks: RunChunks) -> list[str]:
    """The doc_id of every row, in row order."""
    return [d for part in _read(chunks, tables.CHUNKS, ["doc_id"]) for d in part["doc_id"]]


def row_mask(chunks: RunChunks, wheres: list[Where]) -> np.ndarray | None:
    """True for every chunk row all the conditions hold for (None: no conditions)."""
    if not wheres:
        return None
    by_field: dict[str, list[str]] = defaultdict(list)
    for w in wheres:
        by_field[w.field].append(w.value)
    parts = _read(chunks, tables.CHUNKS, ["doc_id", "section"])
    doc_ids = [d for p in parts for d in p["doc_id"]]
    sections = [s for p in parts for s in p.get("section", [None] * len(p["doc_id"]))]
    if len(doc_ids) != chunks.n_rows:
        raise RunError(f"{chunks.run}: chunks/ changed during search")
    keep = np.ones(len(doc_ids), bool)
    if "doc_id" in by_field:
        keep &= np.array([any(d.startswith(v) for v in by_field["doc_id"]) for d in doc_ids], bool)
    if "section" in by_field:
        keep &= np.array([s in by_field["section"] for s in sections], bool)
    doc_conditions = {f: v for f, v in by_field.items() if f not in CHUNK_FIELDS}
    if doc_conditions:
        allowed = _documents(chunks, doc_conditions)
        keep &= np.array([d in allowed for d in doc_ids], bool)
    return keep


def _documents(chunks: RunChunks, conditions: dict[str, list[str]]) -> set[str]:
    """The doc_ids whose language / metadata meet every condition; RunError for a field that no
    document of the run has."""
    allowed, seen = set(), set(DOCUMENT_FIELDS)
    for part in _read(chunks, tables.DOCUMENTS, ["doc_id", "language", "metadata"]):
        n = len(part["doc_id"])
        for i in range(n):
            meta = json.loads(part["metadata"][i]) if part.get("metadata") and part["metadata"][i] else {}
            seen.update(meta)
            record = {
                "language": (part.get("language") or [None] * n)[i],
                **{k: v for k, v in meta.items() if k != "language"},
            }
            if all(any(_matches(record.get(f), v) for v in values) for f, values in conditions.items()):
                allowed.add(part["doc_id"][i])
    unknown = sorted(set(conditions) - seen)
    if unknown:
        fields = [*CHUNK_FIELDS, *sorted(seen)]
        shown = ", ".join(fields[:20]) + (f" and {len(fields) - 20} more" if len(fields) > 20 else "")
        raise RunError(f"--where {unknown[0]}: no document of {chunks.run} has this field; its fields: {shown}")
    return allowed
