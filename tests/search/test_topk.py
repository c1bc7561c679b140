"""Exact top-k over blocks (pure numpy) against a brute-force sort of every score."""

import numpy as np
import pytest

from docbeam.pipeline.search.topk import TopK, exact_topk, normalised


def blocks_of(x: np.ndarray, size: int):
    return [(i, x[i : i + size]) for i in range(0, len(x), size)]


def brute(queries: np.ndarray, x: np.ndarray, k: int):
    scores = normalised(x) @ normalised(queries).T  # [n, q]
    order = np.lexsort((np.broadcast_to(np.arange(len(x))[:, None], scores.shape).T, -scores.T), axis=1)[:, :k]
    return np.take_along_axis(scores.T, order, 1), order


@pytest.mark.parametrize("block", [1, 7, 64, 1000, 5000])
@pytest.mark.parametrize("k", [1, 10, 50])
def test_blocks_of_any_size_give_the_brute_force_answer(block, k):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1000, 32)).astype(np.float32) * rng.uniform(0.5, 2, size=(1000, 1)).astype(np.float32)
    q = rng.normal(size=(4, 32)).astype(np.float32)
    scores, rows = exact_topk(q, blocks_of(x, block), k)
    want_scores, want_rows = brute(q, x, k)
    assert np.array_equal(rows, want_rows)
    assert np.allclose(scores, want_scores, atol=1e-6)


def test_ties_keep_the_lower_rows_whatever_the_blocks():
    x = np.ones((100, 8), np.float32)  # every row scores the same
    q = np.ones((1, 8), np.float32)
    for block in (3, 10, 100):
        _, rows = exact_topk(q, blocks_of(x, block), 5)
        assert rows.tolist() == [[0, 1, 2, 3, 4]]


def test_fewer_rows_than_k_and_zero_rows():
    x = np.eye(3, 4, dtype=np.float32)
    x[1] = 0  # a chunk without tokens: a zero vector scores 0, never NaN
    scores, rows = exact_topk(np.array([[1, 0, 0, 0]], np.float32), blocks_of(x, 2), 10)
    assert rows.tolist() == [[0, 1, 2]] and scores.tolist() == [[1.0, 0.0, 0.0]]
    assert exact_topk(np.ones((2, 4), np.float32), [], 3)[1].shape == (2, 0)


def test_memory_between_blocks_is_k_per_query():
    top = TopK(np.ones((2, 8), np.float32), 3)
    for i in range(20):
        top.add(np.random.default_rng(i).normal(size=(50, 8)).astype(np.float32), i * 50)
        assert top.scores.shape == (2, min(3, 50))
    with pytest.raises(ValueError, match="k must be at least 1"):
        TopK(np.ones((1, 8), np.float32), 0)


def test_a_nan_vector_ranks_last_and_no_row_repeats():
    rng = np.random.default_rng(5)
    block = rng.normal(size=(10, 4)).astype(np.float32)
    block[3] = np.nan
    scores, rows = exact_topk(np.ones(4, np.float32), [(0, block[:6]), (6, block[6:])], 10)
    assert sorted(rows[0].tolist()) == list(range(10)) and rows[0][-1] == 3  # the NaN row last, once
    assert np.isneginf(scores[0][-1]) and np.isfinite(scores[0][:-1]).all()
