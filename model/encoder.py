"""BERT encoder forward pass over a parameter pytree (nanoGPT-style: read top to bottom).

Inputs are packed rows: several segments (windows of different documents) may share a
row, told apart by `segment_ids` (0 = padding); positions restart at 0 in each segment.
"""

import jax
import jax.numpy as jnp

from model.config import EncoderConfig
from model.pooling import segment_mean
from model.weights import Params


def _layer_norm(x: jax.Array, p: dict, eps: float) -> jax.Array:
    x32 = x.astype(jnp.float32)  # statistics in float32 whatever the compute dtype
    mean = x32.mean(-1, keepdims=True)
    var = jnp.square(x32 - mean).mean(-1, keepdims=True)
    y = (x32 - mean) * jax.lax.rsqrt(var + eps) * p["scale"] + p["bias"]
    return y.astype(x.dtype)


def _dense(x: jax.Array, p: dict) -> jax.Array:
    return x @ p["w"] + p["b"]


def _block(x: jax.Array, p: dict, segment_ids: jax.Array, cfg: EncoderConfig, attend) -> jax.Array:
    b, t, _ = x.shape
    q, k, v = jnp.split(_dense(x, p["qkv"]), 3, axis=-1)
    heads = [y.reshape(b, t, cfg.heads, cfg.head_dim) for y in (q, k, v)]
    ctx = attend(*heads, segment_ids=segment_ids).reshape(b, t, cfg.hidden)
    x = _layer_norm(x + _dense(ctx, p["attn_out"]), p["attn_ln"], cfg.layer_norm_eps)
    h = jax.nn.gelu(_dense(x, p["ffn_in"]), approximate=False)  # HF "gelu" is the exact erf form
    return _layer_norm(x + _dense(h, p["ffn_out"]), p["ffn_ln"], cfg.layer_norm_eps)


def encode(
    params: Params,
    cfg: EncoderConfig,
    tokens: jax.Array,
    segment_ids: jax.Array,
    positions: jax.Array,
    *,
    attend,
) -> jax.Array:
    """[B, T] token ids -> [B, T, hidden] final hidden states."""
    e = params["embeddings"]
    x = e["word"][tokens] + e["position"][positions] + e["type"][0]
    x = _layer_norm(x, e["ln"], cfg.layer_norm_eps)
    for i, layer in enumerate(params["layers"]):
        with jax.named_scope(f"layer_{i}"):
            x = _block(x, layer, segment_ids, cfg, attend)
    return x


def embed_segments(
    params: Params,
    cfg: EncoderConfig,
    tokens: jax.Array,
    segment_ids: jax.Array,
    positions: jax.Array,
    *,
    attend,
    max_segments: int,
) -> jax.Array:
    """[B, T] packed rows -> [B, max_segments, hidden] float32, one vector per segment id 1..S.

    Mean over each segment's tokens ([CLS] and [SEP] included, as sentence-transformers
    does), then L2-normalised when the checkpoint normalises. Unused slots are zeros.
    """
    hidden = encode(params, cfg, tokens, segment_ids, positions, attend=attend)
    with jax.named_scope("pooling"):
        vectors = segment_mean(hidden, segment_ids, max_segments)
        if cfg.normalize:
            norm = jnp.linalg.norm(vectors, axis=-1, keepdims=True)
            vectors = vectors / jnp.maximum(norm, 1e-12)
    return vectors


def flops_per_token(cfg: EncoderConfig, context: float) -> float:
    """Model FLOPs per real token (multiply-add = 2), attending over `context` tokens.

    Counts the matmuls only (layer norms, softmax and GELU are a few percent more), the
    usual convention for MFU.
    """
    d, f = cfg.hidden, cfg.intermediate
    dense = 2 * (3 * d * d + d * d + 2 * d * f)
    attention = 2 * 2 * d * context  # QK^T and PV
    return cfg.layers * (dense + attention)
