"""The oracle: attention written out in full, nothing fused, nothing skipped."""

import jax
import jax.numpy as jnp
from jax import Array

from docbeam.kernels.spec import FLOATS, KernelSpec, default_scale, padding_to_zeros


def segment_mask(segment_ids: Array, window: int | None = None) -> Array:
    """[B, T] ids -> [B, T, T] bool: same segment, not padding, and (with a window) at most
    `window` positions apart."""
    same = segment_ids[:, :, None] == segment_ids[:, None, :]
    mask = same & (segment_ids[:, None, :] != 0)
    if window is not None:
        t = jnp.arange(segment_ids.shape[1])
        mask = mask & (jnp.abs(t[:, None] - t[None, :]) <= window)[None]
    return mask


def attend(
    q: Array, k: Array, v: Array, *, segment_ids: Array, scale: float | None = None, window: int | None = None
) -> Array:
    compute = jnp.promote_types(q.dtype, jnp.float32)  # float64 stays float64 for the oracle
    scale = default_scale(q.shape[-1], scale)
    # HIGHEST: the oracle is exact everywhere; a GPU would otherwise run float32 in TF32.
    exact = jax.lax.Precision.HIGHEST
    logits = jnp.einsum("bqhd,bkhd->bhqk", q.astype(compute), k.astype(compute), precision=exact) * scale
    mask = segment_mask(segment_ids, window)[:, None, :, :]
    logits = jnp.where(mask, logits, -jnp.inf)
    # A padding query sees nothing; keep its softmax finite, then zero it.
    logits = jnp.where(mask.any(-1, keepdims=True), logits, 0.0)
    probs = jax.nn.softmax(logits, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", probs, v.astype(compute), precision=exact)
    return padding_to_zeros(out, segment_ids).astype(q.dtype)


KERNEL = KernelSpec(
    name="reference",
    attend=attend,
    dtypes=("float64", *FLOATS),
    windows=True,
    summary="einsum + float32 softmax; materialises [B,H,T,T]; the oracle",
)
