"""What every implementation module exports: one `KernelSpec` named KERNEL."""

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

Attend = Callable[..., jax.Array]
# (platform, shape [B, T, H, D] or None, dtype name or None) -> None if it runs, else why not.
RunsHere = Callable[[str, tuple[int, ...] | None, str | None], str | None]


@dataclass(frozen=True)
class KernelSpec:
    name: str
    attend: Attend
    runs_here: RunsHere
    summary: str
    # True where the implementation only runs emulated on this platform (Pallas interpret).
    emulated_on: tuple[str, ...] = ()


def padding_to_zeros(out: jax.Array, segment_ids: jax.Array) -> jax.Array:
    """Zero the rows of padding queries (id 0), as the contract requires."""
    keep = (segment_ids != 0)[:, :, None, None]
    return jnp.where(keep, out, jnp.zeros((), out.dtype))


def pad_seq(
    arrays: tuple[jax.Array, ...], segment_ids: jax.Array, block: int
) -> tuple[tuple[jax.Array, ...], jax.Array]:
    """Pad the sequence axis (1) up to a multiple of `block`; padding gets segment id 0."""
    seq = segment_ids.shape[1]
    extra = -seq % block
    if not extra:
        return arrays, segment_ids.astype(jnp.int32)
    padded = tuple(jnp.pad(x, [(0, 0), (0, extra)] + [(0, 0)] * (x.ndim - 2)) for x in arrays)
    return padded, jnp.pad(segment_ids.astype(jnp.int32), [(0, 0), (0, extra)])
