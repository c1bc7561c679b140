"""Per-segment pooling for packed rows."""

import jax
import jax.numpy as jnp


def segment_mean(hidden: jax.Array, segment_ids: jax.Array, max_segments: int) -> jax.Array:
    """[B, T, d] x [B, T] ids -> [B, max_segments, d] float32 means of segments 1..max_segments."""
    slots = jnp.arange(1, max_segments + 1, dtype=segment_ids.dtype)
    member = (segment_ids[:, :, None] == slots).astype(jnp.float32)  # [B, T, S]
    sums = jnp.einsum("bts,btd->bsd", member, hidden.astype(jnp.float32))
    counts = member.sum(axis=1)[..., None]
    return sums / jnp.maximum(counts, 1.0)
