"""Top chunks of a run for a query, as dicts: what `docbeam search --json` prints under "hits",
and what a store-backed search is compared with (`search_hits`)."""

from dataclasses import dataclass

import numpy as np

from docbeam.pipeline.core.flags import INDEX_FROM_ROWS
from docbeam.pipeline.core.vector_format import BINARY, INT8
from docbeam.pipeline.search import filters, index_files, quantized, query, run_chunks, topk
from docbeam.pipeline.search import index as ivf
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


@dataclass(frozen=True)
class Ranking:
    scores: np.ndarray  # [q, <=k] best first
    rows: np.ndarray  # chunk row numbers; -1 where an index found fewer than k
    method: str  # "exact", "exact int8 + rescore", "exact binary + rescore" or "index"
    note: str  # why a present index was not used ("" when none was, or it was)


def rank(
    chunks: RunChunks,
    queries: np.ndarray,
    top_k: int,
    use_index: bool | None = None,
    keep: np.ndarray | None = None,
) -> Ranking:
    """Exact search, or the run's index (`docbeam index`) when `use_index` is True, or when it is
    None and the run has at least INDEX_FROM_ROWS chunks; a stale index, or one whose answer
    names no chunk of the run, is passed over with a note. `keep` (--where): only these rows,
    searched exactly. `queries`: the run's vector format's (query_vectors)."""
    queries = chunks.vector_format.truncated(queries)  # full model vectors -> the run's --dims (else as given)
    note = ""
    if keep is None and (use_index or (use_index is None and chunks.n_rows >= INDEX_FROM_ROWS)):
        ranking, note = index_ranking(chunks, queries, top_k, quiet=use_index is not None)
        if ranking is not None:
            return ranking
    scores, rows = exact_rows(chunks, queries, top_k, keep)
    return Ranking(scores, rows, exact_method(chunks), note)


def exact_method(chunks: RunChunks) -> str:
    dtype = chunks.vector_format.dtype
    return f"exact {dtype} + rescore" if dtype in (INT8, BINARY) else "exact"


def query_vectors(chunks: RunChunks, texts: list[str], model: str | None = None) -> np.ndarray:
    """The texts embedded for this run: its checkpoint, then its --dims (float32; search
    quantises them itself where the run's vectors are int8 or binary)."""
    # through the module: tests replace query.embed_queries to search without a model
    return chunks.vector_format.truncated(query.embed_queries(chunks.manifest["model"], texts, model))


def per_document(
    chunks: RunChunks, queries: np.ndarray, top_k: int, keep=None
) -> tuple[list[list[float]], list[list[int]]]:
    """The best chunk of each of the `top_k` best documents, per query: the ranking of chunks
    walked down, a document's first (best) chunk kept. Exact: rows are asked for until every
    query has `top_k` documents or the run has no more rows."""
    doc_of = filters.chunk_doc_ids(chunks)
    n = min(max(top_k * 4, top_k), max(chunks.n_rows, 1))
    while True:
        ranking = rank(chunks, queries, n, use_index=False, keep=keep)
        picked_scores, picked_rows, short = [], [], False
        for scores, rows in zip(ranking.scores, ranking.rows):
            seen: set[str] = set()
            mine_s, mine_r = [], []
            for s, r in zip(scores, rows):
                if r >= 0 and doc_of[r] not in seen:
                    seen.add(doc_of[r])
                    mine_s.append(float(s))
                    mine_r.append(int(r))
                    if len(mine_r) == top_k:
                        break
            short |= len(mine_r) < top_k and len(rows) >= n
            picked_scores.append(mine_s)
            picked_rows.append(mine_r)
        if not short or n >= chunks.n_rows:
            return picked_scores, picked_rows
        n = min(n * 4, chunks.n_rows)


def index_ranking(chunks: RunChunks, queries: np.ndarray, top_k: int, quiet: bool) -> tuple[Ranking | None, str]:
    """(the index's ranking, "") or (None, why search goes exact; "" for a run without an index
    when `quiet`)."""
    index, note = index_files.load(chunks)
    if index is None:
        if not note and not quiet:
            note = f"{chunks.run} has {chunks.n_rows:,} chunks and no index (`docbeam index {chunks.run}` builds one)"
        return None, note
    scores, rows = ivf.search_ivf(index, queries, top_k)
    if not index_files.names_chunks(chunks, rows):  # ids all past the run, or all -1 (faiss: none found)
        path = index_files.paths(chunks.run)[0]
        return None, f"{path} names no chunk of the run; rebuild it with `docbeam index {chunks.run}`"
    return Ranking(scores, rows, "index", ""), ""


def exact_rows(chunks: RunChunks, queries: np.ndarray, top_k: int, keep=None) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) [q, <=top_k] best first: every chunk scored, one block at a time; an int8
    or binary run's in its own type, then rescored (search.quantized)."""
    if chunks.vector_format.dtype in (INT8, BINARY):
        return quantized.search(chunks, queries, top_k, keep)
    return topk.exact_topk(queries, run_chunks.embedding_blocks(chunks), top_k, keep=keep)


def hits_of(chunks: RunChunks, scores: np.ndarray, rows: np.ndarray) -> list[dict]:
    """One query's ranked rows as hit dicts (HIT_KEYS)."""
    kept = [(float(s), int(r)) for s, r in zip(scores, rows) if r >= 0]
    found = run_chunks.read_rows(chunks, [r for _, r in kept])
    return [
        {"rank": rank, "score": score, **{k: found[row][k] for k in HIT_KEYS[2:]}}
        for rank, (score, row) in enumerate(kept, start=1)
    ]


def search_vectors(
    chunks: RunChunks, queries: np.ndarray, top_k: int = 10, use_index: bool | None = None
) -> list[list[dict]]:
    """The top chunks for each query vector (already embedded for this run's model)."""
    ranking = rank(chunks, queries, top_k, use_index)
    return [hits_of(chunks, s, r) for s, r in zip(ranking.scores, ranking.rows)]


def search_hits(
    run: str, query: str, top_k: int = 10, *, model: str | None = None, use_index: bool | None = None
) -> list[dict]:
    """The `top_k` chunks of `run` (its --output, local or gs://) closest to `query`, best first,
    as `docbeam search RUN QUERY --json` lists them under "hits": dicts with HIT_KEYS. The query is
    embedded with the run's own checkpoint (`model`: a copy of it elsewhere), as `docbeam embed`
    embeds queries. `use_index`: as `rank` (False: always exact)."""
    chunks = run_chunks.open_run(run)
    vectors = query_vectors(chunks, [query], model)
    return search_vectors(chunks, vectors, top_k, use_index)[0]
