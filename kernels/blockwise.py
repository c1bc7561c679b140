"""Blockwise attention in plain XLA: the compiled CPU path for long rows.

Dense attention at T=8192 materialises [heads, T, T] scores: ~3 GB per row per layer in
float32, almost all of it masked when a layer only looks `window` tokens either side.
Here the queries go in blocks:

- with a local window, a query block sees only the key blocks its window can reach (a
  slab of `block + 2 * halo` keys), so work and memory are O(T * window) and the blocks
  outside the window are never computed;
- without one, each query block attends to every key in turn (`lax.map` over query
  blocks), so memory is O(T * block) instead of O(T^2) while the arithmetic stays dense.

Exact softmax in float32 (masked maximum, like the reference), no Pallas: XLA compiles it
on every platform, which is what makes it usable on CPU where Pallas only interprets.
"""

import jax
import jax.numpy as jnp
from jax import Array

from docbeam.kernels.spec import KernelSpec, default_scale, pad_seq, padding_to_zeros

GLOBAL_BLOCK = 512  # query rows per step without a window: [H, 512, T] scores at a time


def _window_block(window: int) -> int:
    """Query block for a window: the window rounded up to a power of two (16..256), so the
    slab (3 blocks) is at most ~2x the keys a query block needs."""
    return min(256, max(16, 1 << (max(window, 1) - 1).bit_length()))


def _softmax_attend(q, k, v, mask, scale, compute):
    """q [..., Q, H, D], k/v [..., K, H, D], mask [..., Q, K] -> [..., Q, H, D] (float32 softmax)."""
    s = jnp.einsum("...qhd,...khd->...hqk", q.astype(compute), k.astype(compute)) * scale
    mask = mask[..., None, :, :]
    s = jnp.where(mask, s, -jnp.inf)
    m = jnp.max(s, axis=-1, keepdims=True)
    p = jnp.where(mask, jnp.exp(s - jnp.where(jnp.isfinite(m), m, 0.0)), 0.0)
    denom = p.sum(-1, keepdims=True)
    out = jnp.einsum("...hqk,...khd->...qhd", p / jnp.where(denom > 0, denom, 1.0), v.astype(compute))
    return out


def _local(q, k, v, seg, scale, window, compute):
    batch, seq, heads, dim = q.shape
    block = _window_block(window)
    halo = -(-window // block)  # key blocks needed on each side
    (q, k, v), seg = pad_seq((q, k, v), seg, block)
    n = seg.shape[1] // block
    pad = [(0, 0), (halo * block, halo * block)]
    kp, vp = (jnp.pad(x, pad + [(0, 0), (0, 0)]) for x in (k, v))
    segp = jnp.pad(seg, pad)  # id 0 beyond the ends: masked like padding
    posp = jnp.arange(-halo * block, (n + halo) * block)

    def slab(x):  # [B, (n + 2 halo) block, ...] -> [B, n, (2 halo + 1) block, ...]
        blocks = x.reshape(x.shape[0], n + 2 * halo, block, *x.shape[2:])
        shifted = jnp.stack([blocks[:, s : s + n] for s in range(2 * halo + 1)], axis=2)
        return shifted.reshape(x.shape[0], n, (2 * halo + 1) * block, *x.shape[2:])

    k_s, v_s, seg_s = slab(kp), slab(vp), slab(segp)
    pos_s = slab(posp[None])[0]  # [n, slab]
    q_b = q.reshape(batch, n, block, heads, dim)
    seg_q = seg.reshape(batch, n, block)
    pos_q = jnp.arange(n * block).reshape(n, block)
    near = jnp.abs(pos_q[:, :, None] - pos_s[:, None, :]) <= window  # [n, block, slab]
    mask = (seg_q[..., None] == seg_s[:, :, None, :]) & (seg_s[:, :, None, :] != 0) & near[None]
    out = _softmax_attend(q_b, k_s, v_s, mask, scale, compute)
    return out.reshape(batch, n * block, heads, dim)[:, :seq]


def _global(q, k, v, seg, scale, compute):
    batch, seq, heads, dim = q.shape
    block = min(GLOBAL_BLOCK, seq)
    (q,), seg_q = pad_seq((q,), seg, block)
    n = seg_q.shape[1] // block
    keys_ok = seg[:, None, :] != 0

    def one(args):  # a query block against every key: [B, block, ...]
        qb, sb = args
        mask = (sb[:, :, None] == seg[:, None, :]) & keys_ok
        return _softmax_attend(qb, k, v, mask, scale, compute)

    blocks = (q.reshape(batch, n, block, heads, dim).swapaxes(0, 1), seg_q.reshape(batch, n, block).swapaxes(0, 1))
    out = jax.lax.map(one, blocks)  # [n, B, block, H, D]
    return out.swapaxes(0, 1).reshape(batch, n * block, heads, dim)[:, :seq]


def attend(
    q: Array, k: Array, v: Array, *, segment_ids: Array, scale: float | None = None, window: int | None = None
) -> Array:
    scale = default_scale(q.shape[-1], scale)
    compute = jnp.promote_types(q.dtype, jnp.float32)
    seg = segment_ids.astype(jnp.int32)
    if window is None:
        out = _global(q, k, v, seg, scale, compute)
    else:
        out = _local(q, k, v, seg, scale, window, compute)
    return padding_to_zeros(out.astype(q.dtype), segment_ids)


KERNEL = KernelSpec(
    name="blockwise",
    attend=attend,
    windows=True,
    summary="compiled XLA in query blocks: local windows O(T*window), global O(T*block) memory; long rows on CPU",
)
