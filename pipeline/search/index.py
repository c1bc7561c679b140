"""An approximate index of a run's chunk vectors: FAISS IVF-Flat over cosine (inner product of
normalised vectors), built from the same blocks exact search reads.

Why IVF-Flat (README, "Searching a run", measured): on this 2-core machine an HNSW graph (FAISS
or usearch) took minutes to build for 100k vectors, and IVF-Flat seconds for 1M; IVF keeps the
vectors themselves (no quantisation: scores are the exact cosines of the rows it visits), and a
memory-mapped IVF file lets one query touch only the lists it probes.

Pure functions over arrays; reading and writing the run's `_index/` is the caller's
(pipeline/search/index_files.py).
"""

from collections.abc import Callable, Iterable, Iterator

import numpy as np

from docbeam.pipeline.search.topk import normalised

TRAIN_ROWS = 65_536  # k-means sample: enough for 1,024 lists (64 per list), seconds to train
MAX_LISTS = 1024
NPROBE = 32  # lists visited per query (README: recall@10 and latency at 100k and 1M)


def n_lists(n_rows: int) -> int:
    """Inverted lists for `n_rows` vectors: ~4 sqrt(n), at most MAX_LISTS, at least 1."""
    return int(max(1, min(MAX_LISTS, n_rows, round(4 * np.sqrt(n_rows)))))


def build_ivf(blocks: Callable[[], Iterable[tuple[int, np.ndarray]]], n_rows: int, dim: int, seed: int = 0):
    """A trained, filled faiss.IndexIVFFlat of every row `blocks()` yields (called twice: a strided
    sample to train the lists, then every row in order, so index ids are row numbers)."""
    import faiss

    lists = n_lists(n_rows)
    stride = max(1, n_rows // TRAIN_ROWS)
    parts = [normalised(b[(-first) % stride :: stride]) for first, b in blocks()]
    sample = np.concatenate(parts) if parts else np.empty((0, dim), np.float32)
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, lists, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    index.cp.min_points_per_centroid = 1  # small runs: fewer points than 39 per list is fine
    index.train(np.ascontiguousarray(sample[: max(TRAIN_ROWS, lists)], dtype=np.float32))
    for first, block in blocks():
        index.add_with_ids(normalised(block), np.arange(first, first + len(block), dtype=np.int64))
    return index


def search_ivf(index, queries: np.ndarray, k: int, nprobe: int = NPROBE) -> tuple[np.ndarray, np.ndarray]:
    """(scores, rows) [q, k] best first; a row of -1 where the probed lists held fewer than k."""
    index.nprobe = min(nprobe, index.nlist)
    return index.search(normalised(np.atleast_2d(queries)), k)


def iter_rows(x: np.ndarray, block_rows: int = 8192) -> Iterator[tuple[int, np.ndarray]]:
    """An in-memory matrix as blocks (benchmarks, tests)."""
    for i in range(0, len(x), block_rows):
        yield i, x[i : i + block_rows]
