"""The JAX encoder against sentence-transformers on the same weights."""

import jax
import numpy as np
import pytest

from docbeam.kernels import api as kernels
from docbeam.model import embed_segments, load_checkpoint
from docbeam.pipeline.core.records import Document
from docbeam.pipeline.encode.packing import Packer, PackSpec
from docbeam.pipeline.ingest.chunking import Windowing, chunk_documents
from tests.corpus import varied_texts
from tests.reference import cosine, st_encode


@pytest.fixture(scope="module")
def encoder():
    ckpt, params = load_checkpoint()
    return ckpt, jax.device_put(params)


def embed(encoder, texts: list[str], attention: str = "auto", rows: int = 16) -> dict[int, tuple[np.ndarray, str]]:
    """Chunk 0 vector of each text and that chunk's text, packed several texts per row exactly
    as the pipeline does."""
    ckpt, params = encoder
    spec = PackSpec(rows=rows, seq_len=256)
    docs = [Document(uid=str(i), doc_id=str(i), source="t", row=i, text=t) for i, t in enumerate(texts)]
    packer = Packer(spec)
    batches = []
    for _, segs in chunk_documents(docs, ckpt.tokenizer, ckpt.special, Windowing(256, 32)):
        for s in segs:
            if s.index == 0:
                batches += packer.add(s)
    batches += packer.flush()
    attend = kernels.get(attention).attend
    fn = jax.jit(lambda p, t, s, q: embed_segments(p, ckpt.config, t, s, q, attend=attend, max_segments=64))
    out = {}
    for b in batches:
        vecs = np.asarray(fn(params, b.tokens, b.segment_ids, b.positions))
        for row, sid, seg in b.slots:
            out[int(seg.uid)] = vecs[row, sid - 1], texts[int(seg.uid)][seg.start_char : seg.end_char]
    return out


def test_matches_sentence_transformers_on_200_varied_texts(encoder):
    texts = varied_texts(200)
    ours = embed(encoder, texts)
    ref = st_encode([ours[i][1] for i in range(len(texts))])  # each text's first chunk
    cos = cosine(np.stack([ours[i][0] for i in range(len(texts))]), ref)
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, f"text {worst} ({len(texts[worst].split())} words): cosine {cos[worst]:.6f}"
    assert np.allclose(np.linalg.norm(ref, axis=1), 1, atol=1e-5)


@pytest.mark.parametrize("attention", ["reference", "xla_fused", "flash"])
def test_kernels_give_the_same_embeddings(encoder, attention):
    texts = varied_texts(24, seed=4)
    base = embed(encoder, texts, "native", rows=4)
    other = embed(encoder, texts, attention, rows=4)
    cos = cosine(np.stack([base[i][0] for i in range(len(texts))]), np.stack([other[i][0] for i in range(len(texts))]))
    assert cos.min() >= 0.99999, f"{attention}: worst cosine {cos.min():.7f}"
