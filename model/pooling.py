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


def _row_slots(segment_ids, pool_mask, max_segments: int):
    """Each token's slot in its own row (0..S-1); tokens outside any pool go to slot S.

    Per row, not one flat [B * S] numbering: a row's segments pool on the chip holding the
    row, so the pooled batch stays split over the chips as the rows are (a flat scatter
    made XLA sum a whole [B * S, d] buffer across the chips)."""
    inside = (segment_ids > 0) & (segment_ids <= max_segments) & pool_mask
    return jnp.where(inside, segment_ids - 1, max_segments), max_segments + 1


def _per_row(op, values, slots, n):
    """`op` (a jax.ops.segment_* reduction) over each row's own slots: [B, T, ...] -> [B, S, ...]."""
    return jax.vmap(lambda v, s: op(v, s, n))(values, slots)[:, :-1]


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
    h = hidden.astype(jnp.float32)
    slots, n = _row_slots(segment_ids, pool_mask.astype(bool), max_segments)
    count = _per_row(jax.ops.segment_sum, jnp.ones(slots.shape, jnp.float32), slots, n)[..., None]
    used = count > 0
    token = jnp.broadcast_to(jnp.arange(t), (b, t))
    out = []
    for mode in modes:
        if mode in ("mean", "mean_sqrt_len_tokens"):
            total = _per_row(jax.ops.segment_sum, h, slots, n)
            v = total / jnp.maximum(count if mode == "mean" else jnp.sqrt(count), 1e-9)
        elif mode == "weightedmean":
            w = (positions + 1).astype(jnp.float32)[..., None]
            weight = _per_row(jax.ops.segment_sum, w, slots, n)
            v = _per_row(jax.ops.segment_sum, h * w, slots, n) / jnp.maximum(weight, 1e-9)
        elif mode == "max":
            v = jnp.where(used, _per_row(jax.ops.segment_max, h, slots, n), 0.0)
        elif mode in ("cls", "lasttoken"):
            pick = jax.ops.segment_min if mode == "cls" else jax.ops.segment_max
            at = jnp.clip(_per_row(pick, token, slots, n), 0, t - 1)  # [B, S]
            v = jnp.where(used, jnp.take_along_axis(h, at[..., None], axis=1), 0.0)
        else:
            raise ValueError(f"pooling mode {mode!r}")
        out.append(v)
    return jnp.concatenate(out, axis=-1)
