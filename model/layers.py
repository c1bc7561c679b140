"""The pieces every architecture shares: layer norm, dense, activations, rotary positions.

Precision: with 16-bit weights only the matrix multiplies (and attention) take 16-bit
inputs; products accumulate in float32 and the residual stream, layer norms and
activations stay float32. Rounding the residual to bfloat16 after every layer cost
ModernBERT's pre-norm stack most of its parity (min cosine 0.99997 -> 0.999995 without it).
"""

import jax
import jax.numpy as jnp

from docbeam.model.errors import CheckpointError

# config.json activation names -> functions. HF "gelu" is the exact erf form; the tanh
# approximations go by several names.
ACTIVATIONS = {
    "gelu": lambda x: jax.nn.gelu(x, approximate=False),
    "gelu_new": lambda x: jax.nn.gelu(x, approximate=True),
    "gelu_pytorch_tanh": lambda x: jax.nn.gelu(x, approximate=True),
    "gelu_fast": lambda x: jax.nn.gelu(x, approximate=True),
    "relu": jax.nn.relu,
    "silu": jax.nn.silu,
}


def activation(name: str, where: str):
    if name not in ACTIVATIONS:
        raise CheckpointError(f"{where}: activation {name!r} not supported; docbeam has {', '.join(ACTIVATIONS)}")
    return ACTIVATIONS[name]


def layer_norm(x: jax.Array, p: dict, eps: float) -> jax.Array:
    """float32 in and out whatever the compute dtype; `bias` may be absent (ModernBERT)."""
    x32 = x.astype(jnp.float32)
    mean = x32.mean(-1, keepdims=True)
    var = jnp.square(x32 - mean).mean(-1, keepdims=True)
    y = (x32 - mean) * jax.lax.rsqrt(var + eps) * p["scale"]
    if "bias" in p:
        y = y + p["bias"]
    return y


def dense(x: jax.Array, p: dict) -> jax.Array:
    """x @ w (+ b) -> float32. x is cast to w's dtype; a 16-bit product accumulates in
    float32, more exact, and on CPU XLA's bf16 x bf16 -> f32 GEMM runs faster than bf16 -> bf16
    (README, Measured)."""
    w = p["w"]
    y = jnp.dot(x.astype(w.dtype), w, preferred_element_type=jnp.float32)
    if "b" in p:
        y = y + p["b"]
    return y


def rope(x: jax.Array, positions: jax.Array, theta: float) -> jax.Array:
    """Rotary positions, the rotate-half layout of HF's `apply_rotary_pos_emb`; x [B, T, H, D],
    positions [B, T]. Angles and the rotation in float32, as transformers computes them."""
    dim = x.shape[-1]
    inv_freq = 1.0 / (theta ** (jnp.arange(0, dim, 2, dtype=jnp.float32) / dim))
    angles = positions.astype(jnp.float32)[..., None] * inv_freq  # [B, T, D/2]
    angles = jnp.concatenate([angles, angles], axis=-1)[:, :, None, :]
    cos, sin = jnp.cos(angles), jnp.sin(angles)
    x32 = x.astype(jnp.float32)
    half = dim // 2
    rotated = jnp.concatenate([-x32[..., half:], x32[..., :half]], axis=-1)
    return (x32 * cos + rotated * sin).astype(x.dtype)
