"""--dims and --vector-dtype against sentence-transformers' own truncate_dim and
quantize_embeddings, on the same input vectors: byte for byte for int8 (given the same ranges)
and binary (ubinary), cosine >= 0.9999 for truncation (the encoder itself included)."""

import warnings

import numpy as np
import pytest

from docbeam.pipeline.core.vector_format import (
    BINARY,
    FLOAT16,
    INT8,
    VectorFormat,
    calibration_ranges,
    dequantize,
    quantize,
    truncate,
)
from tests.reference import cosine

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from sentence_transformers.util import quantize_embeddings, truncate_embeddings


def _vectors(n=500, dim=384, seed=0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, dim)).astype(np.float32) * rng.uniform(0.2, 2.0, dim).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize("dims", [384, 256, 128, 64])
def test_int8_is_byte_identical_to_sentence_transformers_given_the_same_ranges(dims):
    v = truncate(_vectors(), dims)
    ranges = calibration_ranges(v[:300])  # calibrated on part: the rest falls outside at places (clipped)
    ours = quantize(v, INT8, ranges)
    theirs = quantize_embeddings(v, "int8", ranges=ranges)
    assert ours.dtype == theirs.dtype == np.int8
    assert ours.tobytes() == theirs.tobytes()


def test_binary_is_sentence_transformers_ubinary_byte_for_byte():
    v = _vectors(dim=384)
    ours = quantize(v, BINARY)
    theirs = quantize_embeddings(v, "ubinary")
    assert ours.dtype == theirs.dtype == np.uint8 and ours.shape == (500, 48)
    assert ours.tobytes() == theirs.tobytes()
    # a width that is no multiple of 8: packed with zero bits at the end, as numpy packs
    assert quantize(v[:, :100], BINARY).tobytes() == quantize_embeddings(v[:, :100], "ubinary").tobytes()


def test_truncation_is_sentence_transformers_truncate_dim_renormalised():
    v = _vectors()
    for dims in (256, 128):
        ours = truncate(v, dims)
        theirs = truncate_embeddings(v, dims)
        assert ours.shape == theirs.shape == (500, dims)
        assert cosine(ours, theirs).min() >= 0.9999
        np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_a_zero_vector_stays_zero_and_a_constant_dimension_does_not_divide_by_zero():
    v = _vectors(10)
    v[3] = 0
    assert not truncate(v, 128)[3].any()
    v[:, 5] = 0.25  # every vector equal in one dimension: one bucket
    ranges = calibration_ranges(v)
    assert quantize(v, INT8, ranges).tobytes() == quantize_embeddings(v, "int8", ranges=ranges).tobytes()


def test_dequantised_int8_keeps_the_ranking_of_float32():
    v = _vectors(2000)
    q = _vectors(20, seed=1)
    ranges = calibration_ranges(v)
    back = dequantize(quantize(v, INT8, ranges), INT8, 384, ranges)
    assert np.abs(back - v).max() <= (ranges[1] - ranges[0]).max() / 255 + 1e-6  # within one bucket
    exact = np.argsort(-(q @ v.T), axis=1)[:, :10]
    approx = np.argsort(-(q @ back.T), axis=1)[:, :10]
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, approx)])
    assert recall >= 0.9


def test_formats_know_their_sizes_and_refuse_what_cannot_be():
    assert VectorFormat(384).bytes_per_vector == 1536 and VectorFormat(384).default
    assert VectorFormat(384, 256, FLOAT16).bytes_per_vector == 512
    assert VectorFormat(384, None, INT8).bytes_per_vector == 384
    assert VectorFormat(384, None, BINARY).bytes_per_vector == 48
    assert VectorFormat(384, 384, "float32").default  # --dims equal to the model's: nothing changes
    with pytest.raises(ValueError, match="--dims 500"):
        VectorFormat(384, 500)
    with pytest.raises(ValueError, match="--vector-dtype 'int4'"):
        VectorFormat(384, None, "int4")


@pytest.mark.slow
def test_docbeam_embed_truncated_matches_sentence_transformers_truncate_dim():
    """The encoder end to end: docbeam's vectors cut to N against SentenceTransformer(truncate_dim=N)."""
    from docbeam.pipeline.encode.embed import embed
    from tests.reference import st_model

    texts = ["How are vectors stored?", "Matryoshka embeddings nest smaller ones inside.", "A third, longer text " * 8]
    full = embed(texts)
    model = st_model()
    for dims in (256, 128):
        with model.truncate_embeddings(dims):
            theirs = model.encode(texts, convert_to_numpy=True)
        assert cosine(truncate(full, dims), theirs).min() >= 0.9999
