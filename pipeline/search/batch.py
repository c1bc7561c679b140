"""`docbeam search RUN --queries FILE`: many queries in one process (the model loaded once),
one JSON line out per query, in the order given.

A line of FILE is a query: a JSON object with "query" (and optionally "id", returned as given),
a JSON string, or plain text. Blank lines are skipped. Queries are embedded and ranked
BATCH at a time, and each line is printed as soon as its batch is answered.
"""

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from docbeam.pipeline.search import hits
from docbeam.pipeline.search.run_chunks import RunChunks

BATCH = 32  # queries embedded and scored together: one pass over the run's blocks per batch


@dataclass(frozen=True)
class Query:
    text: str
    id: Any = None
    line: int = 0


def parse_lines(lines: list[str], name: str) -> list[Query]:
    """The queries of a --queries file; ValueError naming the file and line of a bad one."""
    out = []
    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        item: Any = line
        if line[0] in '{"':
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise ValueError(
                    f'{name}:{n}: not JSON ({exc}); a plain-text query must not start with {{ or "'
                ) from None
        if isinstance(item, dict):
            text, qid = item.get("query"), item.get("id")
        else:
            text, qid = item, None
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f'{name}:{n}: no query (a JSON line needs a non-empty "query" string)')
        out.append(Query(text, qid, n))
    if not out:
        raise ValueError(f"{name}: no queries")
    return out


def answers(
    chunks: RunChunks,
    queries: list[Query],
    top_k: int,
    *,
    model: str | None = None,
    keep: np.ndarray | None = None,
    per_document: bool = False,
    use_index: bool | None = None,
) -> Iterator[dict]:
    """One dict per query, in order: query, id (None when not given), method, ms (its share of its batch's
    embedding and search time), hits (search.HIT_KEYS)."""
    for i in range(0, len(queries), BATCH):
        part = queries[i : i + BATCH]
        start = time.perf_counter()
        vectors = hits.query_vectors(chunks, [q.text for q in part], model)
        if per_document:
            scores, rows = hits.per_document(chunks, vectors, top_k, keep)
            method = hits.exact_method(chunks) + ", per document"
        else:
            ranking = hits.rank(chunks, vectors, top_k, use_index, keep)
            scores, rows, method = list(ranking.scores), list(ranking.rows), ranking.method
        found = [hits.hits_of(chunks, np.asarray(s), np.asarray(r)) for s, r in zip(scores, rows)]
        ms = (time.perf_counter() - start) * 1000 / len(part)
        for q, h in zip(part, found):
            yield {
                "query": q.text,
                "id": q.id,  # null for a line without one: every line has the same keys
                "method": method,
                "ms": round(ms, 2),
                "hits": h,
            }
