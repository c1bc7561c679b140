"""`jax.nn.dot_product_attention`: XLA's fused attention; cuDNN on GPU for 16-bit inputs."""

import jax
import jax.numpy as jnp

from kernels.reference import segment_mask
from kernels.spec import KernelSpec, padding_to_zeros


def attend(
    q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
) -> jax.Array:
    mask = segment_mask(segment_ids)[:, None, :, :]
    # implementation=None lets JAX pick cuDNN where it can (GPU, fp16/bf16) and XLA elsewhere.
    out = jax.nn.dot_product_attention(q, k, v, mask=mask, scale=scale, implementation=None)
    return padding_to_zeros(out, segment_ids)


def _runs_here(platform: str, shape: tuple[int, ...] | None, dtype: str | None) -> str | None:
    if dtype is not None and jnp.dtype(dtype) not in (jnp.float32, jnp.bfloat16, jnp.float16):
        return f"dtype {dtype} not supported (float32, bfloat16, float16)"
    return None


KERNEL = KernelSpec(
    name="native",
    attend=attend,
    runs_here=_runs_here,
    summary="jax.nn.dot_product_attention (XLA; cuDNN on GPU for bf16/fp16)",
)
