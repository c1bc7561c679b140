"""What every implementation module exports: one `KernelSpec` named KERNEL."""

from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

Attend = Callable[..., jax.Array]
# Extra shape constraint: shape [B, T, H, D] -> None if fine, else why not.
ShapeCheck = Callable[[tuple[int, ...]], str | None]

ALL_PLATFORMS = ("cpu", "gpu", "tpu")
FLOATS = ("float32", "bfloat16", "float16")


@dataclass(frozen=True)
class KernelSpec:
    name: str
    attend: Attend
    summary: str
    platforms: tuple[str, ...] = ALL_PLATFORMS
    not_elsewhere: str = ""  # why it does not run on the other platforms
    dtypes: tuple[str, ...] = FLOATS
    emulated_on: tuple[str, ...] = ()  # platforms where it only runs emulated (Pallas interpret)
    shape_check: ShapeCheck | None = None

    def runs_here(self, platform: str, shape: tuple[int, ...] | None, dtype: str | None) -> str | None:
        """None if it runs on `platform` for this shape and dtype, else the reason it does not."""
        if platform not in self.platforms:
            return self.not_elsewhere or f"does not run on {platform}"
        if dtype is not None and jnp.dtype(dtype).name not in self.dtypes:
            return f"dtype {dtype} not supported ({', '.join(self.dtypes)})"
        if shape is not None and self.shape_check is not None:
            return self.shape_check(shape)
        return None


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
