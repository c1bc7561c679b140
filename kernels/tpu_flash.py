"""Adapter: JAX's Pallas TPU flash attention (jax.experimental.pallas.ops.tpu.flash_attention).

Upstream differences this file absorbs: layout [B, H, T, D]; `sm_scale` defaults to 1.0
(not 1/sqrt(D)); block sizes must divide the kv length and be multiples of 128 (short
sequences are padded); padding queries (id 0) attend to padding keys, so their rows are
zeroed here. On CPU it runs emulated under
`force_tpu_interpret_mode` (for checking only).
"""

import jax
from jax.experimental.pallas.ops.tpu import flash_attention as upstream  # version-sensitive: this file only

from docbeam.kernels import compat as pc
from docbeam.kernels.spec import BLOCK, default_scale, pad_seq, padding_to_zeros, platform_of_backend, upstream_tpu


def attend(
    q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
) -> jax.Array:
    seq, block = q.shape[1], BLOCK  # short sequences too: upstream needs kv blocks of 128
    (q, k, v), seg = pad_seq((q, k, v), segment_ids, block)
    bhtd = [x.transpose(0, 2, 1, 3) for x in (q, k, v)]
    sizes = upstream.BlockSizes(block_q=block, block_k_major=block, block_k=block, block_b=1)
    with pc.tpu_interpret_mode(platform_of_backend() == "cpu"):
        out = upstream.flash_attention(
            *bhtd,
            segment_ids=upstream.SegmentIds(q=seg, kv=seg),
            sm_scale=default_scale(q.shape[-1], scale),
            block_sizes=sizes,
        )
    return padding_to_zeros(out.transpose(0, 2, 1, 3)[:, :seq], segment_ids)


KERNEL = upstream_tpu(
    name="tpu_flash",
    attend=attend,
    windows=False,  # upstream has no local window: auto never picks it for windowed layers
    summary="JAX's Pallas TPU flash_attention (segment ids, [B,H,T,D] inside)",
)
