"""What every implementation module exports (one `KernelSpec` named KERNEL), and the few
rules all of them share: the platform name, the default scale, the block size, padding."""

import contextlib
import contextvars
import enum
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

import jax
import jax.numpy as jnp


class Attend(Protocol):
    """The contract every kernel's `attend` implements (layout BTNH, as jax.nn.dot_product_attention).

    q, k, v        [batch, seq, heads, head_dim], float32 | bfloat16 (float64 for the reference)
    segment_ids    [batch, seq] int32: a token attends only to tokens with the same id (packed rows;
                   the ids need not be sorted); 0 marks padding
    scale          the logit scale; None: 1/sqrt(head_dim)
    returns        [batch, seq, heads, head_dim] in q's dtype; rows whose id is 0 are zeros
    """

    def __call__(
        self, q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
    ) -> jax.Array: ...


class AttendWindowed(Attend, Protocol):
    """The contract with a local window, for kernels whose KernelSpec says `windows=True`.

    window         local attention: a token also needs |i - j| <= window (row positions; segments are
                   contiguous, so the distance inside the segment); None: global. Static (a Python int);
                   `auto` never picks a kernel without it for a windowed layer
    """

    def __call__(
        self,
        q: jax.Array,
        k: jax.Array,
        v: jax.Array,
        *,
        segment_ids: jax.Array,
        scale: float | None = None,
        window: int | None = None,
    ) -> jax.Array: ...


Shape = tuple[int, int, int, int]  # [batch, seq, heads, head_dim]
# Extra shape constraint: shape [B, T, H, D] -> None if fine, else why not.
ShapeCheck = Callable[[Shape], str | None]

ALL_PLATFORMS = ("cpu", "gpu", "tpu")
FLOATS = ("float32", "bfloat16", "float16")
BLOCK = 128  # the largest block; JAX's TPU kernels need exactly this (the Mosaic lane width)


_TRACING_FOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("docbeam_kernel_platform", default=None)


def platform_of_backend(backend: str | None = None) -> str:
    """JAX backend name -> 'cpu' | 'gpu' | 'tpu'. Without a name: the platform the kernel being
    traced is for (`tracing_for`), else this process's default backend."""
    if backend is None and _TRACING_FOR.get():
        return str(_TRACING_FOR.get())
    backend = backend or jax.default_backend()
    return {"cuda": "gpu", "rocm": "gpu"}.get(backend, backend)


@contextlib.contextmanager
def tracing_for(platform: str) -> Iterator[None]:
    """Trace a kernel for `platform`, which need not be this machine's: compiling for a TPU
    on a CPU host must lower the Mosaic kernel, not the CPU's interpret mode."""
    token = _TRACING_FOR.set(platform)
    try:
        yield
    finally:
        _TRACING_FOR.reset(token)


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
    # A Pallas call counts in XLA's cost analysis only through the cost it declares: False for
    # an upstream kernel that declares none (its cost is then added from `attention_cost`).
    declares_cost: bool = True

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


def attention_cost(shape: Shape, itemsize: int, window: int | None = None) -> tuple[int, int, int]:
    """(flops, transcendentals, bytes accessed) of attention over [B, T, H, D]: the two matmuls
    over the keys a query can reach (2w+1 with a local window), one exp per score, q, k, v and
    the output read or written once, the segment ids twice. What Pallas kernels declare."""
    batch, seq, heads, head_dim = shape
    keys = seq if window is None else min(seq, 2 * window + 1)
    scores = batch * heads * seq * keys
    return 4 * scores * head_dim, scores, 4 * batch * seq * heads * head_dim * itemsize + 2 * batch * seq * 4


def upstream_tpu(
    name: str, attend: Attend, summary: str, windows: bool = False, declares_cost: bool = True
) -> KernelSpec:
    """The spec of one of JAX's own Mosaic TPU kernels: TPUs, and a CPU in Pallas' TPU interpret mode."""
    return KernelSpec(
        name=name,
        attend=attend,
        summary=summary,
        platforms=("tpu", "cpu"),
        emulated_on=("cpu",),
        not_elsewhere="TPU-only kernel (Mosaic); no GPU lowering",
        dtypes=("float32", "bfloat16"),
        windows=windows,
        declares_cost=declares_cost,
    )
