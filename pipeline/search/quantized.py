"""Search over an int8 or binary run: every chunk scored in its stored type, then the best
`top_k x RESCORE_MULTIPLIER` candidates rescored with the float32 query against their
dequantised vectors (sentence-transformers' `semantic_search_faiss(..., rescore=True)`).

- int8: the chunks' codes against the float32 query scaled per dimension by the bucket size
  (q * steps): q . dequantised chunk = that score + a constant per query, so the candidates are
  ranked as float32 would rank the decoded vectors, the chunks read as int8 (an int8 x int8
  product of quantised query and codes, measured first, lost recall: README, Vector formats)
- binary: score = minus the Hamming distance of the packed bits (XOR, popcount)
- rescoring: float32 query . dequantised chunk (int8: bucket bottoms; binary: +-1/sqrt(dim))
"""

import numpy as np

from docbeam.pipeline.core.vector_format import BINARY, INT8, dequantize, int8_steps, quantize
from docbeam.pipeline.search import run_chunks, topk
from docbeam.pipeline.search.run_chunks import RunChunks

# Candidates per hit kept for rescoring (README, "Vector formats": recall@10 measured with these).
RESCORE_MULTIPLIER = {INT8: 4, BINARY: 10}


def _int8_scores(block: np.ndarray, scaled: np.ndarray) -> np.ndarray:
    return block.astype(np.float32) @ scaled.T


def _hamming_scores(block: np.ndarray, bits: np.ndarray) -> np.ndarray:
    out = np.empty((len(block), len(bits)), np.float32)
    for i, q in enumerate(bits):  # one query at a time: [n, width] bytes of memory, not [n, q, width]
        out[:, i] = -np.bitwise_count(block ^ q).sum(axis=1, dtype=np.int32)
    return out


SCORERS = {INT8: _int8_scores, BINARY: _hamming_scores}


# A run whose stored vectors fit in this many bytes is read once per search, its blocks kept for
# the rescoring; a larger one is read twice (the candidates, then their vectors).
KEEP_BLOCKS_BYTES = 64 << 20


def _blocks(chunks: RunChunks):
    """The stored blocks, as a list when they fit KEEP_BLOCKS_BYTES (read once), else a re-reader."""
    if chunks.n_rows * chunks.vector_format.width <= KEEP_BLOCKS_BYTES:
        kept = list(run_chunks.stored_blocks(chunks))
        return lambda: kept
    return lambda: run_chunks.stored_blocks(chunks)


def candidates(chunks: RunChunks, queries: np.ndarray, n: int, keep: np.ndarray | None, blocks=None) -> np.ndarray:
    """[q, <=n] rows: the best by the stored type's own score."""
    fmt = chunks.vector_format
    if fmt.dtype == INT8:
        assert chunks.ranges is not None, "open_run refuses an int8 run without ranges"
        _, steps = int8_steps(chunks.ranges)
        asked = queries * steps
    else:
        asked = quantize(queries, fmt.dtype)
    _, rows = topk.exact_topk(asked, (blocks or _blocks(chunks))(), n, SCORERS[fmt.dtype], keep)
    return rows


def stored_rows(chunks: RunChunks, rows: np.ndarray, blocks=None) -> np.ndarray:
    """The stored vectors of `rows` (sorted, unique), in that order: one pass over the blocks."""
    out = np.empty(
        (len(rows), chunks.vector_format.width), np.uint8 if chunks.vector_format.dtype == BINARY else np.int8
    )
    for first, block in (blocks or _blocks(chunks))():
        lo, hi = np.searchsorted(rows, [first, first + len(block)])
        if hi > lo:
            out[lo:hi] = block[rows[lo:hi] - first]
    return out


def search(chunks: RunChunks, queries: np.ndarray, top_k: int, keep=None) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) [q, <=top_k] best first: candidates in the stored type, rescored in float32."""
    fmt = chunks.vector_format
    queries = np.atleast_2d(np.asarray(queries, np.float32))
    blocks = _blocks(chunks)
    cand = candidates(chunks, queries, top_k * RESCORE_MULTIPLIER[fmt.dtype], keep, blocks)
    wanted = np.unique(cand[cand >= 0])
    vectors = dequantize(stored_rows(chunks, wanted, blocks), fmt.dtype, fmt.dim, chunks.ranges)
    k = min(top_k, cand.shape[1])
    scores, rows = np.empty((len(queries), k), np.float32), np.empty((len(queries), k), np.int64)
    for i, q in enumerate(queries):
        mine = cand[i]
        s = vectors[np.searchsorted(wanted, mine)] @ q
        order = np.lexsort((mine, -s))[:k]  # ties: the lower row, as exact search
        scores[i], rows[i] = s[order], mine[order]
    return scores, rows
