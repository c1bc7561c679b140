"""Per-segment pooling for packed rows: every sentence-transformers pooling mode.

Segments are told apart by segment id (1..S; 0 = padding). `pool_mask` says which tokens
take part (sentence-transformers' attention mask after it leaves prompt tokens out);
`positions` restart at 0 in each segment. Per mode, as sentence-transformers computes it:

    cls                   the first pooled token (the segment's first token; the first after
                          the prompt when the prompt is left out)
    max                   element-wise max over the pooled tokens
    mean                  sum / count
    mean_sqrt_len_tokens  sum / sqrt(count)
    weightedmean          tokens weighted by position + 1 (positions counted from the
                          segment's start, prompt included)
    lasttoken             the last pooled token

Several modes concatenate in the order given. All in float32; unused slots are zeros.
"""

import jax
import jax.numpy as jnp


def _flat_slots(segment_ids, pool_mask, max_segments: int):
    """Each token's slot in a flat [B * S] numbering; tokens outside any pool go to slot B*S."""
    b = segment_ids.shape[0]
    inside = (segment_ids > 0) & (segment_ids <= max_segments) & pool_mask
    flat = jnp.arange(b)[:, None] * max_segments + segment_ids - 1
    return jnp.where(inside, flat, b * max_segments).reshape(-1), b * max_segments + 1


def pool(
    hidden: jax.Array,
    segment_ids: jax.Array,
    positions: jax.Array,
    pool_mask: jax.Array,
    modes: tuple[str, ...],
    max_segments: int,
) -> jax.Array:
    """[B, T, d] -> [B, max_segments, len(modes) * d] float32."""
    b, t, d = hidden.shape
    h = hidden.astype(jnp.float32).reshape(b * t, d)
    slots, n = _flat_slots(segment_ids, pool_mask.astype(bool), max_segments)
    count = jax.ops.segment_sum(jnp.ones_like(slots, jnp.float32), slots, n)[:-1, None]
    used = count > 0
    token = jnp.arange(b * t)
    out = []
    for mode in modes:
        if mode in ("mean", "mean_sqrt_len_tokens"):
            total = jax.ops.segment_sum(h, slots, n)[:-1]
            v = total / jnp.maximum(count if mode == "mean" else jnp.sqrt(count), 1e-9)
        elif mode == "weightedmean":
            w = (positions.reshape(-1) + 1).astype(jnp.float32)[:, None]
            v = jax.ops.segment_sum(h * w, slots, n)[:-1] / jnp.maximum(jax.ops.segment_sum(w, slots, n)[:-1], 1e-9)
        elif mode == "max":
            v = jnp.where(used, jax.ops.segment_max(h, slots, n)[:-1], 0.0)
        elif mode in ("cls", "lasttoken"):
            pick = jax.ops.segment_min if mode == "cls" else jax.ops.segment_max
            at = pick(token, slots, n)[:-1]
            v = jnp.where(used, h[jnp.clip(at, 0, b * t - 1)], 0.0)
        else:
            raise ValueError(f"pooling mode {mode!r}")
        out.append(v)
    return jnp.concatenate(out, axis=-1).reshape(b, max_segments, len(modes) * d)
