"""`jax.nn.dot_product_attention`: XLA's fused attention; cuDNN on GPU for 16-bit inputs."""

import jax
from jax import Array

from docbeam.kernels.reference import segment_mask
from docbeam.kernels.spec import KernelSpec, padding_to_zeros


def attend(
    q: Array, k: Array, v: Array, *, segment_ids: Array, scale: float | None = None, window: int | None = None
) -> Array:
    # The window goes into the mask (not local_window_size): one mask, the same semantics
    # on every backend.
    mask = segment_mask(segment_ids, window)[:, None, :, :]
    # implementation=None lets JAX pick cuDNN where it can (GPU, fp16/bf16) and XLA elsewhere.
    out = jax.nn.dot_product_attention(q, k, v, mask=mask, scale=scale, implementation=None)
    return padding_to_zeros(out, segment_ids)


KERNEL = KernelSpec(
    name="native",
    attend=attend,
    windows=True,
    summary="jax.nn.dot_product_attention (XLA; cuDNN on GPU for bf16/fp16)",
)
