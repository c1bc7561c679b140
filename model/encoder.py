"""The one entry point for every architecture: packed rows -> one vector per segment.

The architecture module (bert, xlm_roberta, modernbert) gives token states; then the
checkpoint's sentence-transformers modules: Pooling, Dense layers, Normalize.
"""

import jax
import jax.numpy as jnp

from docbeam.model.architectures import architecture
from docbeam.model.config import EncoderConfig
from docbeam.model.pooling import pool
from docbeam.model.weights import Params

_DENSE_ACTIVATIONS = {
    "tanh": jnp.tanh,
    "identity": lambda x: x,
    "relu": jax.nn.relu,
    "gelu": lambda x: jax.nn.gelu(x, approximate=False),
    "sigmoid": jax.nn.sigmoid,
}


def encode(params: Params, cfg: EncoderConfig, tokens, segment_ids, positions, *, attend) -> jax.Array:
    """[B, T] token ids -> [B, T, hidden] final hidden states."""
    return architecture(cfg.arch).encode(params, cfg, tokens, segment_ids, positions, attend=attend)


def _unit(x: jax.Array) -> jax.Array:
    return x / jnp.maximum(jnp.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def embed_segments(
    params: Params,
    cfg: EncoderConfig,
    tokens: jax.Array,
    segment_ids: jax.Array,
    positions: jax.Array,
    *,
    attend,
    max_segments: int,
    pool_mask: jax.Array | None = None,
    unit_norm: bool = False,
) -> jax.Array:
    """[B, T] packed rows -> [B, max_segments, embedding_dim] float32, one vector per segment id 1..S.

    `attend` follows the kernel contract, `window=` included (kernels.for_layers routes
    ModernBERT's local layers). `pool_mask` [B, T] (1 = pooled; default: every token)
    leaves tokens out of pooling, e.g. a prompt when the Pooling module excludes it.
    The vector is the checkpoint's own (L2-normalised only if it has a Normalize module);
    `unit_norm` normalises it whatever the checkpoint says. Unused slots are zeros.
    """
    hidden = encode(params, cfg, tokens, segment_ids, positions, attend=attend)
    with jax.named_scope("pooling"):
        mask = jnp.ones(tokens.shape, bool) if pool_mask is None else pool_mask.astype(bool)
        vectors = pool(hidden, segment_ids, positions, mask, cfg.head.pooling, max_segments)
        for spec, p in zip(cfg.head.dense, params.get("dense", [])):
            y = vectors @ p["w"].astype(jnp.float32)
            vectors = _DENSE_ACTIVATIONS[spec.activation](y + p["b"] if "b" in p else y)
        if cfg.head.normalize or unit_norm:
            vectors = _unit(vectors)
    return vectors


def flops_per_token(cfg: EncoderConfig, context: float) -> float:
    """Model FLOPs per real token (multiply-add = 2), attending over `context` tokens
    (a local layer over at most its window's 2w+1).

    Counts the matmuls only (layer norms, softmax and activations are a few percent more),
    the usual convention for MFU.
    """
    d, f = cfg.hidden, cfg.intermediate
    ffn = 3 * d * f if cfg.arch == "modernbert" else 2 * d * f  # GeGLU: in-projection twice as wide
    dense = 2 * (3 * d * d + d * d + ffn)
    total = 0.0
    for layer in range(cfg.layers):
        w = cfg.window_of(layer)
        seen = context if w is None else min(context, 2 * w + 1)
        total += dense + 2 * 2 * d * seen  # QK^T and PV
    return total
