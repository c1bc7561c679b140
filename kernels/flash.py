"""docbeam's flash attention in Pallas, for packed bidirectional encoders.

One program per (batch row, head, query block). The query block stays resident; the
loop walks the key blocks with an online softmax (FlashAttention-2, float32 running max,
denominator and accumulator), so memory is O(T) rather than O(T^2). A key block whose
segment-id range cannot meet the query block's is skipped outright: with packed rows most
blocks off the diagonal are skipped. Ranges, not sets, so the test is conservative for
unsorted ids and exact for the contiguous segments packing produces.

With a local window (a token sees its segment's tokens at most `window` positions away),
the loop visits only the key blocks that overlap the query block's window: at T=8192 and
a window of 64, 3 of 64 key blocks. That is where a flash kernel earns its keep.

Pads T up to a multiple of the block (padding gets id 0), so any length works.
CPU runs it in Pallas interpret mode (for checking; slow). GPU lowers through Triton,
TPU through Mosaic.
"""

import functools

import jax
import jax.numpy as jnp
from jax import Array, lax

from docbeam.kernels import compat as pc
from docbeam.kernels.spec import (
    BLOCK,
    KernelSpec,
    attention_cost,
    block_for,
    default_scale,
    pad_seq,
    padding_to_zeros,
    platform_of_backend,
)

_MASKED = -0.7 * float(jnp.finfo(jnp.float32).max)  # finite: keeps exp() and max() NaN-free
_NO_ID = jnp.iinfo(jnp.int32).max


def _id_range(ids: Array) -> tuple[Array, Array]:
    """(lowest non-padding id, highest id) of a block; padding-only gives an empty range."""
    return jnp.min(jnp.where(ids == 0, _NO_ID, ids)), jnp.max(ids)


def _key_blocks(block_q: int, block_k: int, n_k: int, window: int | None) -> tuple[int | Array, int | Array]:
    """[first, last) key blocks the current query block can see: all, or those within the window."""
    if window is None:
        return 0, n_k
    i = pc.program_id(2)
    first = jnp.maximum(0, (i * block_q - window) // block_k)
    last = jnp.minimum(n_k, ((i + 1) * block_q - 1 + window) // block_k + 1)
    return first, last


def _kernel(seg_q_ref, seg_k_ref, q_ref, k_ref, v_ref, o_ref, *, scale: float, block_k: int, window: int | None):
    seg_q = seg_q_ref[...]
    q = q_ref[...]
    # float32 inputs get float32 matmuls (no TF32 / bf16 passes): the kernel must match the oracle.
    precision = jax.lax.Precision.HIGHEST if q.dtype == jnp.float32 else None
    q_lo, q_hi = _id_range(seg_q)
    block_q, head_dim = q.shape
    q_start = pc.program_id(2) * block_q

    def visit(j, carry):
        keys = pc.ds(j * block_k, block_k)
        seg_k = seg_k_ref[keys]
        k_lo, k_hi = _id_range(seg_k)

        def step(carry):
            acc, m_prev, l_prev = carry
            s = jnp.dot(q, k_ref[keys, :].T, precision=precision, preferred_element_type=jnp.float32) * scale
            mask = (seg_q[:, None] == seg_k[None, :]) & (seg_k[None, :] != 0)
            if window is not None:  # 2-D iotas: what both Triton and Mosaic lower
                at_q = lax.broadcasted_iota(jnp.int32, mask.shape, 0) + q_start
                at_k = lax.broadcasted_iota(jnp.int32, mask.shape, 1) + j * block_k
                mask = mask & (jnp.abs(at_q - at_k) <= window)
            s = jnp.where(mask, s, _MASKED)
            m_next = jnp.maximum(m_prev, s.max(axis=-1))
            p = jnp.where(mask, jnp.exp(s - m_next[:, None]), 0.0)
            correction = jnp.exp(m_prev - m_next)
            pv = jnp.dot(p.astype(v_ref.dtype), v_ref[keys, :], precision=precision, preferred_element_type=jnp.float32)
            return acc * correction[:, None] + pv, m_next, l_prev * correction + p.sum(axis=-1)

        return lax.cond((q_hi >= k_lo) & (k_hi >= q_lo), step, lambda c: c, carry)

    init = (
        jnp.zeros((block_q, head_dim), jnp.float32),
        jnp.full((block_q,), _MASKED, jnp.float32),
        jnp.zeros((block_q,), jnp.float32),
    )
    first, last = _key_blocks(block_q, block_k, seg_k_ref.shape[0] // block_k, window)
    acc, _, denom = lax.fori_loop(first, last, visit, init)
    safe = jnp.where(denom > 0, denom, 1.0)  # padding queries saw nothing: denom 0, acc 0
    o_ref[...] = (acc / safe[:, None]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=("scale", "platform", "window"))
def _flash(q, k, v, segment_ids, *, scale: float, platform: str, window: int | None):
    batch, seq, heads, head_dim = q.shape
    # Mosaic must prove every key slice starts at a multiple of 128: TPU blocks are 128 tokens
    # (short rows padded up to one block).
    block = BLOCK if platform == "tpu" else block_for(seq)
    (q, k, v), segment_ids = pad_seq((q, k, v), segment_ids, block)
    padded = segment_ids.shape[1]
    # [B, T, H, D] -> [B, H, T, D]: the blocked dims must be the last two (Mosaic tiling).
    q, k, v = (x.transpose(0, 2, 1, 3) for x in (q, k, v))
    q_block = pc.block_spec((None, None, block, head_dim), lambda b, h, i: (b, h, i, 0))
    kv_full = pc.block_spec((None, None, padded, head_dim), lambda b, h, i: (b, h, 0, 0))
    out = pc.pallas_call(
        functools.partial(_kernel, scale=scale, block_k=block, window=window),
        grid=(batch, heads, padded // block),
        # Segment ids as [B, 1, T]: Mosaic wants a block's last two dims to be multiples of
        # (8, 128) or whole, and a [B, T] block of one row is neither once a chip holds 8 rows.
        in_specs=[
            pc.block_spec((None, None, block), lambda b, h, i: (b, 0, i)),
            pc.block_spec((None, None, padded), lambda b, h, i: (b, 0, 0)),
            q_block,
            kv_full,
            kv_full,
        ],
        out_specs=q_block,
        out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype),
        interpret=pc.interpret(platform),
        compiler_params=pc.compiler_params(platform, parallel_dims=3),
        name="docbeam_flash",
        cost=attention_cost((batch, padded, heads, head_dim), q.dtype.itemsize, window),
    )(segment_ids[:, None], segment_ids[:, None], q, k, v)
    return out.transpose(0, 2, 1, 3)[:, :seq]


def attend(
    q: Array, k: Array, v: Array, *, segment_ids: Array, scale: float | None = None, window: int | None = None
) -> Array:
    scale = default_scale(q.shape[-1], scale)
    seg = segment_ids.astype(jnp.int32)
    out = _flash(q, k, v, seg, scale=scale, platform=platform_of_backend(), window=window)
    return padding_to_zeros(out, segment_ids)


def _head_dim_check(shape: tuple[int, ...]) -> str | None:
    return f"head_dim {shape[-1]} not a multiple of 8" if shape[-1] % 8 else None


KERNEL = KernelSpec(
    name="flash",
    attend=attend,
    dtypes=("float32", "bfloat16"),
    shape_check=_head_dim_check,
    windows=True,
    summary="docbeam Pallas kernel: online softmax, segment ids, local windows; skips invisible key blocks",
    emulated_on=("cpu",),
)
