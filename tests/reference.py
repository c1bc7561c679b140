"""The reference side: sentence-transformers on the same checkpoint (test extra only)."""

import functools

import numpy as np


@functools.cache
def st_model():
    import torch
    from sentence_transformers import SentenceTransformer

    from docbeam.model.checkpoint import default_checkpoint_dir

    torch.set_num_threads(2)
    return SentenceTransformer(str(default_checkpoint_dir()), device="cpu")


def st_encode(texts: list[str], batch_size: int = 32) -> np.ndarray:
    return st_model().encode(texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True)


def st_embed_ids(windows: list[list[int]]) -> np.ndarray:
    """sentence-transformers' own modules (BERT, pooling, normalise) on given token ids."""
    import torch

    model = st_model()
    out = []
    with torch.inference_mode():
        for ids in windows:
            feats = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
            out.append(model(feats)["sentence_embedding"][0].numpy())
    return np.stack(out)


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.atleast_2d(a), np.atleast_2d(b)
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)
