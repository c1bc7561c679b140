"""Top chunks of a run for a query, as dicts: what `docbeam search --json` prints under "hits",
and what a store-backed search is compared with (`search_hits`)."""

import numpy as np

from docbeam.pipeline.search import run_chunks, topk
from docbeam.pipeline.search.query import embed_queries
from docbeam.pipeline.search.run_chunks import RunChunks

# The keys of every hit, in this order (--json).
HIT_KEYS = (
    "rank",
    "score",
    "doc_id",
    "chunk_index",
    "page_start",
    "page_end",
    "section",
    "start_char",
    "end_char",
    "text",
)


def exact_rows(chunks: RunChunks, queries: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) [q, <=top_k] best first: every chunk scored, one block at a time."""
    return topk.exact_topk(queries, run_chunks.embedding_blocks(chunks), top_k)


def hits_of(chunks: RunChunks, scores: np.ndarray, rows: np.ndarray) -> list[dict]:
    """One query's ranked rows as hit dicts (HIT_KEYS)."""
    found = run_chunks.read_rows(chunks, [int(r) for r in rows])
    return [
        {"rank": rank, "score": float(score), **{k: found[int(row)][k] for k in HIT_KEYS[2:]}}
        for rank, (score, row) in enumerate(zip(scores, rows), start=1)
    ]


def search_vectors(chunks: RunChunks, queries: np.ndarray, top_k: int = 10) -> list[list[dict]]:
    """The top chunks for each query vector (already embedded for this run's model), exact."""
    scores, rows = exact_rows(chunks, queries, top_k)
    return [hits_of(chunks, s, r) for s, r in zip(scores, rows)]


def search_hits(run: str, query: str, top_k: int = 10, *, model: str | None = None) -> list[dict]:
    """The `top_k` chunks of `run` (its --output, local or gs://) closest to `query`, best first,
    as `docbeam search RUN QUERY --json` lists them under "hits": dicts with HIT_KEYS. The query is
    embedded with the run's own checkpoint (`model`: a copy of it elsewhere), as `docbeam embed`
    embeds queries."""
    chunks = run_chunks.open_run(run)
    vectors = embed_queries(chunks.manifest["model"], [query], model)
    return search_vectors(chunks, vectors, top_k)[0]
