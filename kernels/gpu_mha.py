"""Adapter: JAX's Pallas GPU (Triton) fused attention, jax.experimental.pallas.ops.gpu.attention.mha.

Upstream differences this file absorbs: `sm_scale` defaults to 1.0; the sequence must be a
multiple of the block (padded here); padding queries attend to padding keys (rows zeroed
here). Upstream marks it deprecated in favour of tokamax; kept while it ships with JAX.
On CPU it runs with interpret=True (for checking only).
"""

import warnings

import jax

from docbeam.kernels.spec import KernelSpec, block_for, default_scale, pad_seq, padding_to_zeros, platform_of_backend

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from jax.experimental.pallas.ops.gpu import attention as upstream  # version-sensitive


def attend(
    q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
) -> jax.Array:
    seq = q.shape[1]
    block = block_for(seq)
    (q, k, v), seg = pad_seq((q, k, v), segment_ids, block)
    out = upstream.mha(
        q,
        k,
        v,
        seg,
        sm_scale=default_scale(q.shape[-1], scale),
        block_sizes=upstream.BlockSizes(block_q=block, block_k=block),
        interpret=platform_of_backend() == "cpu",
    )
    return padding_to_zeros(out[:, :seq], segment_ids)


KERNEL = KernelSpec(
    name="gpu_mha",
    attend=attend,
    platforms=("gpu", "cpu"),
    not_elsewhere="Triton kernel: GPU only",
    windows=False,  # upstream has no local window: auto never picks it for windowed layers
    summary="JAX's Pallas GPU (Triton) mha with segment ids",
    emulated_on=("cpu",),
)
