"""Adapter: JAX's Pallas GPU (Triton) fused attention, jax.experimental.pallas.ops.gpu.attention.mha.

Upstream differences this file absorbs: `sm_scale` defaults to 1.0; the sequence must be a
multiple of the block (padded here); padding queries attend to padding keys (rows zeroed
here). Upstream marks it deprecated in favour of tokamax; kept while it ships with JAX.
On CPU it runs with interpret=True (for checking only).
"""

import warnings

import jax
import jax.numpy as jnp

from kernels.spec import KernelSpec, pad_seq, padding_to_zeros

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from jax.experimental.pallas.ops.gpu import attention as upstream  # version-sensitive


def attend(
    q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
) -> jax.Array:
    from kernels.registry import platform_of_backend

    seq = q.shape[1]
    block = min(128, max(16, 1 << (seq - 1).bit_length()))
    (q, k, v), seg = pad_seq((q, k, v), segment_ids, block)
    out = upstream.mha(
        q,
        k,
        v,
        seg,
        sm_scale=q.shape[-1] ** -0.5 if scale is None else scale,
        block_sizes=upstream.BlockSizes(block_q=block, block_k=block),
        interpret=platform_of_backend() == "cpu",
    )
    return padding_to_zeros(out[:, :seq], segment_ids)


def _runs_here(platform: str, shape: tuple[int, ...] | None, dtype: str | None) -> str | None:
    if platform not in ("gpu", "cpu"):
        return "Triton kernel: GPU only"
    if dtype is not None and jnp.dtype(dtype) not in (jnp.float32, jnp.bfloat16, jnp.float16):
        return f"dtype {dtype} not supported"
    return None


KERNEL = KernelSpec(
    name="gpu_mha",
    attend=attend,
    runs_here=_runs_here,
    summary="JAX's Pallas GPU (Triton) mha with segment ids",
    emulated_on=("cpu",),
)
