"""Per-document vectors from chunk vectors (numpy only: assembly and queries share it)."""

import numpy as np


def doc_embedding(vectors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """L2-normalised weighted mean of a document's chunk vectors [n, dim], weighted by each
    chunk's token count (a chunk that fits the whole text is the document's vector)."""
    w = np.asarray(weights, np.float64)
    mean = (np.asarray(vectors, np.float64) * w[:, None]).sum(0) / w.sum()
    return (mean / max(np.linalg.norm(mean), 1e-12)).astype(np.float32)
