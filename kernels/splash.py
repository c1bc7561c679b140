"""Adapter: JAX's Pallas TPU splash attention (block-sparse; skips fully masked blocks).

Upstream differences this file absorbs: one example at a time ([H, T, D], vmapped here);
no softmax scale (q is pre-scaled); sequence padded to the 128 block; the mask object is
built once per (T, H) and cached; padding rows zeroed. On CPU it runs with the kernel's
own `interpret=True` (for checking only).
"""

import functools

import jax
from jax.experimental.pallas.ops.tpu import splash_attention as upstream  # version-sensitive: this file only

from docbeam.kernels.spec import BLOCK, default_scale, pad_seq, padding_to_zeros, platform_of_backend, upstream_tpu


@functools.lru_cache(maxsize=16)
def _kernel(seq: int, heads: int, interpret: bool):
    mask = upstream.MultiHeadMask([upstream.FullMask((seq, seq))] * heads)
    # Sequence-minor q, k, v: the [B, T, H*D] projection becomes [B, H, D, T] by one re-layout,
    # and T (not a head_dim of 32 or 64) fills the TPU's 128 lanes. Head-dim-minor cost a
    # second copy of each of q, k, v per layer (the default model compiled for v5e:4: 443 -> 374
    # KB per token; README, "Compiling for a TPU on any machine").
    minor = upstream.QKVLayout.SEQ_MINOR
    sizes = upstream.BlockSizes(
        block_q=BLOCK, block_kv=BLOCK, block_kv_compute=BLOCK, q_layout=minor, k_layout=minor, v_layout=minor
    )
    # The kernel holds mask-info arrays; make them concrete so the cache never holds a tracer.
    with jax.ensure_compile_time_eval():
        return upstream.make_splash_mha(mask, head_shards=1, q_seq_shards=1, block_sizes=sizes, interpret=interpret)


def attend(
    q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
) -> jax.Array:
    seq, heads = q.shape[1], q.shape[2]
    scale = default_scale(q.shape[-1], scale)
    (q, k, v), seg = pad_seq((q, k, v), segment_ids, BLOCK)
    kernel = _kernel(q.shape[1], heads, platform_of_backend() == "cpu")

    def one(qi, ki, vi, si):
        ids = upstream.SegmentIds(q=si, kv=si)
        return kernel((qi * scale).astype(qi.dtype), ki, vi, segment_ids=ids)

    qt, kt, vt = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    out = jax.vmap(one)(qt, kt, vt, seg)
    return padding_to_zeros(out.transpose(0, 2, 1, 3)[:, :seq], segment_ids)


KERNEL = upstream_tpu(
    name="splash",
    attend=attend,
    windows=False,  # upstream has LocalMask, not wired here: auto never picks it for windowed layers
    summary="JAX's Pallas TPU splash attention (block-sparse, segment ids)",
    declares_cost=False,  # jax 0.10.2's make_splash_mha declares no CostEstimate
)
