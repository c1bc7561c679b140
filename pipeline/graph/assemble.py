"""Per-document results from segment vectors, and the duplicate doc_id rule. Pure.

Duplicate rule: doc_id must be unique in a run's output. When several input records carry
the same doc_id, the one from the smallest (source path, row) is kept; the others go to
errors/ as `duplicate_doc_id`, naming the record that was kept. The rule depends only on
the inputs, never on processing order, so reruns agree.
"""

import bisect
import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np

from docbeam.pipeline.core.records import DocInfo, Provenance, Rejection, SegmentVector, reject
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.encode.doc_pooling import doc_embedding


@dataclass(frozen=True)
class AssembledDoc:
    document: dict
    chunks: list[dict]
    others: list[SegmentVector]  # non-chunk segments, for the extractors


def assemble(info: DocInfo, vectors: list[SegmentVector], model: str) -> AssembledDoc | Rejection:
    if len(vectors) != info.n_segments:
        problem = f"expected {info.n_segments} segment vectors, got {len(vectors)}"
        return reject(Stage.ASSEMBLE, "incomplete", info.source, problem, row=info.row, doc_id=info.doc_id)
    chunks = sorted((v for v in vectors if v.kind == "chunk"), key=lambda v: v.index)
    others = [v for v in vectors if v.kind != "chunk"]
    prov = info.provenance
    document = {
        "doc_id": info.doc_id,
        "source": info.source,
        "n_chars": info.n_chars,
        "n_tokens": info.n_tokens,
        "n_chunks": len(chunks),
        "embedding": doc_embedding(np.stack([c.vector for c in chunks]), np.array([c.n_tokens for c in chunks])),
        "model": model,
        "attention": "|".join(sorted({c.attention for c in chunks})),
        "metadata": json.dumps(info.metadata, sort_keys=True, default=str) if info.metadata else None,
        "text": info.text,
        "format": prov.format if prov else None,
        "url": prov.url if prov else None,
        "crawl_date": dt.datetime.fromisoformat(prov.crawl_date) if prov and prov.crawl_date else None,
        "fingerprint": info.fingerprint,
        "language": info.language,
    }
    chunk_rows = [
        {
            "doc_id": info.doc_id,
            "chunk_index": c.index,
            "start_char": c.start_char,
            "end_char": c.end_char,
            "n_tokens": c.n_tokens,
            "embedding": c.vector,
            "text": info.text[c.start_char : c.end_char] if info.text is not None else None,
            **pages_of(prov, c.start_char, c.end_char),
            "section": section_of(prov, c.start_char),
            "cut_in_word": c.cut_in_word,
        }
        for c in chunks
    ]
    return AssembledDoc(document, chunk_rows, others)


def pages_of(prov: Provenance | None, start: int, end: int) -> dict[str, int | None]:
    """The 1-based pages a span [start, end) touches (PDF), or nulls where pages are unknown."""
    if not prov or not prov.pages:
        return {"page_start": None, "page_end": None}
    first = bisect.bisect_right(prov.pages, start)
    last = bisect.bisect_right(prov.pages, max(start, end - 1))
    return {"page_start": max(first, 1), "page_end": max(last, 1)}


def section_of(prov: Provenance | None, start: int) -> str | None:
    """The heading of the section a span starts in (the last one at or before it)."""
    if not prov or not prov.sections:
        return None
    i = bisect.bisect_right([at for at, _ in prov.sections], start)
    return prov.sections[i - 1][1] if i else None


class _Record(Protocol):
    doc_id: str
    source: str
    row: int | None


R = TypeVar("R", bound=_Record)


def pick_winner(records: Iterable[R]) -> tuple[R, list[Rejection]]:
    """The duplicate rule, for all records sharing one doc_id (parsed documents or their
    assembly infos): the first by (source, row) is kept, every other one is rejected."""
    ordered = sorted(records, key=lambda r: (r.source, r.row or 0))
    kept, dupes = ordered[0], ordered[1:]
    return kept, [
        reject(
            Stage.ASSEMBLE,
            "duplicate_doc_id",
            d.source,
            f"doc_id {d.doc_id!r} already used by {kept.source} row {kept.row} (kept)",
            row=d.row,
            doc_id=d.doc_id,
        )
        for d in dupes
    ]


def written_earlier(record: _Record, doc_id: str) -> Rejection:
    """A doc_id an earlier wave of this run already wrote: this record is a duplicate."""
    problem = f"doc_id {doc_id!r} already written by an earlier wave"
    return reject(Stage.ASSEMBLE, "duplicate_doc_id", record.source, problem, row=record.row, doc_id=doc_id)
