"""Exact top-k over vectors that arrive in blocks: memory bounded by one block plus k per query.

Scores are cosine similarities (dot products of L2-normalised vectors): a model without a
Normalize module stores unnormalised vectors, and cosine is what its users compare. Ties
break by the lower row number, so the order never depends on the block size.
"""

import numpy as np


def normalised(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float32); a zero row stays zero (it scores 0 against anything)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


class TopK:
    """The best `k` rows per query over every block added so far.

    `add(block, first_row)` scores a block [n, dim] against the queries [q, dim] and keeps, per
    query, the k best of (the k kept so far + the block's own k best, found by argpartition):
    O(q * (n + k)) work and O(q * k) memory between blocks, whatever the number of rows.
    """

    def __init__(self, queries: np.ndarray, k: int, scorer=None):
        """`scorer(block, queries)` -> [n, q] scores (default: cosine; int8 and binary runs score
        their codes, search.quantized)."""
        if k < 1:
            raise ValueError(f"k must be at least 1, not {k}")
        self.scorer = scorer
        self.queries = np.atleast_2d(queries) if scorer else normalised(np.atleast_2d(queries))
        self.k = k
        q = len(self.queries)
        self.scores = np.empty((q, 0), np.float32)
        self.rows = np.empty((q, 0), np.int64)

    def add(self, block: np.ndarray, first_row: int, keep: np.ndarray | None = None) -> None:
        """Score rows `first_row .. first_row + len(block) - 1` (those `keep` marks, if given)."""
        rows = np.arange(first_row, first_row + len(block), dtype=np.int64)
        if keep is not None:
            block, rows = block[keep], rows[keep]
        if len(block) == 0:
            return
        scores = self.scorer(block, self.queries) if self.scorer else normalised(block) @ self.queries.T  # [n, q]
        # A NaN vector (a corrupt row) must rank last, not break the partition below: np.partition
        # orders NaN above every number, and the k-th "largest" would then be NaN.
        scores = np.nan_to_num(scores, nan=-np.inf)
        best = _best(scores.T, rows, self.k)  # [q, <=k] per query, unordered
        self.scores = np.concatenate([self.scores, best[0]], axis=1)
        self.rows = np.concatenate([self.rows, best[1]], axis=1)
        if self.scores.shape[1] > self.k:
            self.scores, self.rows = _best(self.scores, self.rows, self.k)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(scores [q, k'], rows [q, k']) best first, k' = min(k, rows seen)."""
        order = np.lexsort((self.rows, -self.scores), axis=1)
        return np.take_along_axis(self.scores, order, 1), np.take_along_axis(self.rows, order, 1)


def _best(scores: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `scores` [q, n]: the k largest with their row numbers (`rows`: [n] or [q, n]),
    in no particular order. Ties at the k-th score keep the lower row numbers."""
    q, n = scores.shape
    rows = np.broadcast_to(rows, (q, n))
    if n <= k:
        return scores, np.ascontiguousarray(rows)
    # Sort key: score descending, then row ascending; argpartition alone would pick among
    # equal scores arbitrarily, and a tie at the cut would then depend on the block size.
    kth = np.partition(scores, n - k, axis=1)[:, n - k : n - k + 1]  # the k-th largest per query
    keep = np.empty((q, k), np.int64)
    for i in range(q):
        above = np.flatnonzero(scores[i] > kth[i])
        tied = np.flatnonzero(scores[i] == kth[i])
        tied = tied[np.argsort(rows[i, tied], kind="stable")][: k - len(above)]
        picked = np.concatenate([above, tied])
        assert len(picked) == k, (len(picked), k)  # fewer would silently repeat rows below
        keep[i] = picked
    return np.take_along_axis(scores, keep, 1), np.take_along_axis(rows, keep, 1)


def exact_topk(queries: np.ndarray, blocks, k: int, scorer=None, keep=None) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k of `queries` over `blocks`, an iterable of (first_row, [n, dim] array);
    `keep`: a boolean per row of the whole run (None: every row)."""
    top = TopK(queries, k, scorer)
    for first_row, block in blocks:
        top.add(block, first_row, None if keep is None else keep[first_row : first_row + len(block)])
    return top.result()
