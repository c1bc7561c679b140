"""Attention shaped for XLA's CPU fusions: the fastest implementation on CPU.

jax.nn.dot_product_attention masks the logits before the softmax; on CPU that `where`
materialises the [B, H, T, T] scores several times over. Here the row maximum is taken
over the unmasked logits and the mask multiplies the exponentials, which XLA fuses into
the two matmuls: faster attention and encoder on CPU (`python -m docbeam.kernels.bench`;
the README's Measured section has the figures).

The price of an unmasked maximum: a query whose own segment's logits all sit far below a
masked logit gets exponentials in (or near) float32's subnormal range. Any row whose
softmax denominator falls under e^-60 comes back as NaN, never as a plausible wrong
number; the encoder runtime re-runs such a batch with an exact kernel. (A per-layer
check-and-branch costs ~10% of the encoder; the NaN costs nothing.) Also from the shared
maximum: other segments of a row can move a result's last bits (never its value), so
unlike `native` it is not bit-for-bit independent of its row-mates.
"""

import jax
import jax.numpy as jnp
from jax import Array

from docbeam.kernels import reference
from docbeam.kernels.spec import KernelSpec, default_scale, padding_to_zeros

TRUSTED_DENOM = float(jnp.exp(jnp.float32(-60.0)))


def attend(
    q: Array, k: Array, v: Array, *, segment_ids: Array, scale: float | None = None, window: int | None = None
) -> Array:
    scale = default_scale(q.shape[-1], scale)
    compute = jnp.promote_types(q.dtype, jnp.float32)
    qt, kt, vt = (x.astype(compute).transpose(0, 2, 1, 3) for x in (q * scale, k, v))
    mask = reference.segment_mask(segment_ids, window)[:, None].astype(compute)
    # HIGHEST: a GPU otherwise runs float32 matmuls in TF32 (H200: 1e-4 off the reference, and
    # a neighbouring segment moved results by more than their last bits); the CPU ignores it.
    precision = jax.lax.Precision.HIGHEST if compute == jnp.float32 else None
    scores = jnp.matmul(qt, kt.swapaxes(-1, -2), precision=precision)  # [B, H, T, T]
    weights = jnp.exp(scores - scores.max(-1, keepdims=True)) * mask
    denom = weights.sum(-1, keepdims=True)
    # Trusted only while the query's own largest weight is far from float32's subnormal range:
    # denom >= e^-60 keeps every weight within e^-27 of it a normal number. Below, NaN.
    out = jnp.where(denom >= TRUSTED_DENOM, jnp.matmul(weights, vt, precision=precision) / denom, jnp.nan)
    return padding_to_zeros(out.transpose(0, 2, 1, 3).astype(q.dtype), segment_ids)


KERNEL = KernelSpec(
    name="xla_fused",
    attend=attend,
    windows=True,
    summary="exp x mask fused into the two matmuls (XLA); fastest on CPU; NaN, never wrong, on underflow",
)
