"""What every implementation module exports (one `KernelSpec` named KERNEL), and the few
rules all of them share: the platform name, the default scale, the block size, padding."""

import enum
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

Attend = Callable[..., jax.Array]
Shape = tuple[int, int, int, int]  # [batch, seq, heads, head_dim]
# Extra shape constraint: shape [B, T, H, D] -> None if fine, else why not.
ShapeCheck = Callable[[Shape], str | None]

ALL_PLATFORMS = ("cpu", "gpu", "tpu")
FLOATS = ("float32", "bfloat16", "float16")
BLOCK = 128  # the largest block; JAX's TPU kernels need exactly this (the Mosaic lane width)


def platform_of_backend(backend: str | None = None) -> str:
    """JAX backend name -> 'cpu' | 'gpu' | 'tpu'."""
    backend = backend or jax.default_backend()
    return {"cuda": "gpu", "rocm": "gpu"}.get(backend, backend)


def default_scale(head_dim: int, scale: float | None) -> float:
    """The logit scale: 1/sqrt(head_dim) unless the caller gives one."""
    return head_dim**-0.5 if scale is None else float(scale)


def block_for(seq: int) -> int:
    """Block length of the blocked kernels: a power of two (Triton needs it), at least 16
    (the smallest MMA tile), at most BLOCK."""
    return min(BLOCK, max(16, 1 << (seq - 1).bit_length()))


class Status(enum.Enum):
    RUNS = "runs"
    EMULATED = "emulated"  # runs, in Pallas interpret mode: for checking numbers, not for speed
    UNSUPPORTED = "unsupported"  # not on this platform, dtype or shape
    NOT_IMPORTABLE = "not importable"  # an upstream API moved or an optional extra is missing


@dataclass(frozen=True)
class Availability:
    status: Status
    reason: str = ""

    @property
    def usable(self) -> bool:
        return self.status in (Status.RUNS, Status.EMULATED)


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
    windows: bool = False  # takes the contract's optional local window (`window=`)

    def availability(
        self, platform: str, shape: Shape | None, dtype: str | None, window: int | None = None
    ) -> Availability:
        if window is not None and not self.windows:
            return Availability(Status.UNSUPPORTED, "no local window (sliding-window attention) in this kernel")
        if platform not in self.platforms:
            return Availability(Status.UNSUPPORTED, self.not_elsewhere or f"does not run on {platform}")
        if dtype is not None and jnp.dtype(dtype).name not in self.dtypes:
            return Availability(Status.UNSUPPORTED, f"dtype {dtype} not supported ({', '.join(self.dtypes)})")
        if shape is not None and self.shape_check is not None and (why := self.shape_check(shape)):
            return Availability(Status.UNSUPPORTED, why)
        if platform in self.emulated_on:
            return Availability(
                Status.EMULATED, f"runs emulated (Pallas interpret mode on {platform}): for checking, not speed"
            )
        return Availability(Status.RUNS)


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
