"""Find, check and choose attention implementations.

Each implementation lives in its own module exporting `KERNEL` (a `KernelSpec`); the names
are in `catalog`. Modules are imported lazily: an adapter whose upstream API moved fails to
import, shows up as not importable with the import error, and breaks nothing else.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
from jax.sharding import Mesh

from docbeam.kernels import compat
from docbeam.kernels.catalog import EXTRAS, KERNELS
from docbeam.kernels.spec import (
    Availability,
    KernelSpec,
    Shape,
    Status,
    attention_cost,
    platform_of_backend,
    tracing_for,
)


class KernelUnavailable(ValueError):
    """An explicitly requested attention implementation cannot run here."""


@dataclass(frozen=True)
class Choice:
    requested: str
    name: str
    reason: str
    attend: Callable[..., jax.Array]

    def record(self, platform: str) -> dict:
        """The kernel choice as the manifest and the logs state it."""
        return {"requested": self.requested, "used": self.name, "reason": self.reason, "platform": platform}


def load(name: str) -> KernelSpec:
    if name not in KERNELS:
        raise KernelUnavailable(f"unknown attention {name!r}; choose one of: auto, {', '.join(KERNELS)}")
    return importlib.import_module(KERNELS[name]).KERNEL


def check_request(shape: Shape | None, dtype: str | None) -> None:
    """Shapes and dtypes are checked once, here, for every implementation."""
    if shape is not None and (len(shape) != 4 or not all(isinstance(n, int) and n > 0 for n in shape)):
        raise ValueError(f"attention shape {shape}: expected [batch, seq, heads, head_dim] of positive integers")
    if dtype is not None:
        try:
            jnp.dtype(dtype)
        except TypeError:
            raise ValueError(f"attention dtype {dtype!r}: not a dtype (float32, bfloat16, float16)") from None


def check_window(window: int | None) -> None:
    if window is not None and (not isinstance(window, int) or isinstance(window, bool) or window < 0):
        raise ValueError(f"attention window {window!r}: expected None or a non-negative int (tokens either side)")


def availability(
    name: str, platform: str, shape: Shape | None = None, dtype: str | None = None, window: int | None = None
) -> Availability:
    check_request(shape, dtype)
    check_window(window)
    try:
        spec = load(name)
    except ImportError as exc:  # an upstream API moved or an extra is not installed
        module, extra = EXTRAS.get(name, (None, None))
        if module and exc.name == module:
            return Availability(Status.NOT_IMPORTABLE, f"not installed (optional extra): pip install -e '.[{extra}]'")
        return Availability(Status.NOT_IMPORTABLE, f"cannot import: {exc}")
    return spec.availability(platform, shape, dtype, window)


def available(
    platform: str | None = None, shape: Shape | None = None, dtype: str | None = None, window: int | None = None
) -> list[str]:
    platform = platform or platform_of_backend()
    return [n for n in KERNELS if availability(n, platform, shape, dtype, window).usable]


def report(
    platform: str | None = None, shape: Shape | None = None, dtype: str | None = None, window: int | None = None
) -> list[dict]:
    """One row per implementation: name, status, why, summary (for `docbeam kernels`)."""
    platform = platform or platform_of_backend()
    rows = []
    for name in KERNELS:
        avail = availability(name, platform, shape, dtype, window)
        summary = "" if avail.status is Status.NOT_IMPORTABLE else load(name).summary
        rows.append(
            {
                "name": name,
                "available": avail.usable,
                "status": avail.status.value,
                "note": avail.reason,
                "summary": summary,
            }
        )
    return rows


def _checked(name: str, spec: KernelSpec, platform: str) -> Callable[..., jax.Array]:
    """Check the contract's shapes and window at trace time, name the call for the profiler, and
    trace it for the platform it was chosen for (interpret mode only where that is a CPU)."""

    def scoped(q, k, v, *, segment_ids, scale=None, window=None):
        if q.ndim != 4 or k.shape != q.shape or v.shape != q.shape or segment_ids.shape != q.shape[:2]:
            raise ValueError(
                f"attention {name}: q, k, v must share [batch, seq, heads, head_dim] and segment_ids be "
                f"[batch, seq]; got q{q.shape} k{k.shape} v{v.shape} segment_ids{segment_ids.shape}"
            )
        check_window(window)
        if window is None:
            with jax.named_scope(f"attention_{name}"), tracing_for(platform):
                return spec.attend(q, k, v, segment_ids=segment_ids, scale=scale)
        if not spec.windows:
            raise KernelUnavailable(f"attention {name} takes no local window; choose one of {windowed_names()}")
        with jax.named_scope(f"attention_{name}_local"), tracing_for(platform):
            return spec.attend(q, k, v, segment_ids=segment_ids, scale=scale, window=window)

    scoped.__name__ = f"attend_{name}"
    return scoped


def _sharded(attend: Callable[..., jax.Array], mesh: Mesh, axis: str) -> Callable[..., jax.Array]:
    """Every kernel runs per device on its rows of the batch; see compat.shard_over_batch."""

    def per_shard(q, k, v, *, segment_ids, scale=None, window=None):
        local = compat.shard_over_batch(
            lambda a, b, c, s: attend(a, b, c, segment_ids=s, scale=scale, window=window), mesh, axis, n_batched=4
        )
        return local(q, k, v, segment_ids)

    return per_shard


def uncounted_cost(name: str, shape: Shape, itemsize: int, window: int | None = None) -> tuple[int, int, int]:
    """What XLA's cost analysis misses of one call of kernel `name`: (flops, transcendentals,
    bytes) for a Pallas kernel that declares no cost, zeros for every other."""
    return (0, 0, 0) if load(name).declares_cost else attention_cost(shape, itemsize, window)


def windowed_names() -> str:
    return ", ".join(n for n in KERNELS if _windows(n))


def _windows(name: str) -> bool:
    try:
        return load(name).windows
    except ImportError:
        return False


# Crossovers measured by `python -m docbeam.kernels.bench --layer modernbert` on the 2-core CPU
# (docs/models.md has the tables). Global layers: xla_fused stays faster than blockwise, but holds
# heads*T^2*4 bytes of scores per row (3.2 GB at 8192): from 4096 on, auto takes blockwise for
# memory. Local layers: blockwise computes only the blocks inside the window.
CPU_BLOCKWISE_LOCAL_FROM = 1024
CPU_BLOCKWISE_GLOBAL_FROM = 4096
# Crossovers measured on one H200 by `bash tests/device/run_checks.sh` (docs/models.md has the
# tables). 16-bit: docbeam's flash beats native from T=512, local windows included. float32: the
# same flash loses to native (its Triton dots run at full float32), while JAX's gpu_mha wins from
# T=1024; blockwise takes local windows.
GPU_FLASH_16BIT_FROM = 512
GPU_MHA_FLOAT32_FROM = 1024
GPU_LOCAL_FROM = 1024


def _sixteen_bit(dtype: str | None) -> bool:
    return dtype is not None and jnp.dtype(dtype) in (jnp.bfloat16, jnp.float16)


def _auto_local(platform: str, seq: int | None, dtype: str | None, window: int) -> tuple[str, str]:
    """Layers with a local window: never an adapter that cannot take one."""
    long = seq is not None and seq >= 4 * window
    if platform == "gpu" and seq is not None and seq >= GPU_LOCAL_FROM and long:
        if _sixteen_bit(dtype):
            return "flash", f"GPU, local window {window}, T={seq}: flash visits only the key blocks inside the window"
        return "blockwise", (
            f"GPU, float32, local window {window}, T={seq}: blockwise computes only the key blocks inside the "
            "window (flash's float32 dots are slow on the GPU)"
        )
    if platform in ("cpu", "tpu") and seq is not None and seq >= CPU_BLOCKWISE_LOCAL_FROM and long:
        return "blockwise", (
            f"{platform.upper()}, local window {window}, T={seq}: compiled blockwise attention computes only "
            "the key blocks inside the window (O(T*window)), dense kernels all T^2"
        )
    if platform == "cpu":
        return "xla_fused", f"CPU, local window {window}, T={seq}: short rows, the masked fused softmax is fastest"
    return "native", f"{platform.upper()}, local window {window}, T={seq}: XLA attention with the window in the mask"


def _auto(platform: str, shape: Shape | None, dtype: str | None, window: int | None = None) -> tuple[str, str]:
    seq = shape[1] if shape else None
    if window is not None:
        return _auto_local(platform, seq, dtype, window)
    if platform == "tpu":
        if seq is not None and seq >= 128 and seq % 128 == 0 and availability("splash", platform, shape, dtype).usable:
            return "splash", f"TPU, T={seq} divisible by block 128: splash (block-sparse, skips masked blocks)"
        return "native", f"TPU, T={seq} not a multiple of 128 or splash unavailable: XLA attention"
    if platform == "gpu":
        if _sixteen_bit(dtype):
            if seq is not None and seq >= GPU_FLASH_16BIT_FROM and availability("flash", platform, shape, dtype).usable:
                return "flash", f"GPU, {dtype}, T={seq}: flash, 1.7-3.7x native measured on an H200, memory O(T)"
            return "native", f"GPU, {dtype}, T={seq}: short rows, XLA attention through jax.nn.dot_product_attention"
        if seq is not None and seq >= GPU_MHA_FLOAT32_FROM and availability("gpu_mha", platform, shape, dtype).usable:
            return "gpu_mha", f"GPU, float32, T={seq}: JAX's Pallas mha, memory O(T), 1.0-1.6x native on an H200"
        return "native", f"GPU, {dtype or 'float32'}, T={seq}: XLA attention"
    if seq is not None and seq >= CPU_BLOCKWISE_GLOBAL_FROM:
        return "blockwise", (
            f"{platform.upper()}, T={seq}: blockwise attention, one query block at a time (memory O(T*block); "
            "dense scores would need heads*T^2*4 bytes per row)"
        )
    return "xla_fused", (
        f"{platform.upper()}: XLA attention with the softmax fused into the matmuls (~1.3x the encoder "
        "throughput of jax.nn.dot_product_attention here); Pallas kernels only run in interpret mode"
    )


def get(
    name: str = "auto",
    *,
    platform: str | None = None,
    shape: Shape | None = None,
    dtype: str | None = None,
    mesh: Mesh | None = None,
    batch_axis: str = "data",
    window: int | None = None,
) -> Choice:
    """Resolve `name` ('auto' or an implementation) for this platform, shape, dtype and
    local `window` (None: global attention; an int: the layers this choice serves attend
    at most `window` tokens either side, and only kernels that take a window qualify).

    'auto' never fails. An explicit name that cannot run here raises KernelUnavailable
    naming what is missing and what can run instead; it is never silently substituted.
    With a `mesh` of several devices the kernel runs per device on its share of the batch
    (`batch_axis` of the mesh), so the batch must divide by the number of devices.
    """
    platform = platform or platform_of_backend()
    check_request(shape, dtype)
    check_window(window)
    if name == "auto":
        chosen, reason = _auto(platform, shape, dtype, window)
        if not availability(chosen, platform, shape, dtype, window).usable:  # should not happen; stay safe
            chosen, reason = "reference", f"{reason}; {chosen} unavailable, using reference"
        reason = f"{chosen}: {reason}"
    else:
        avail = availability(name, platform, shape, dtype, window)
        if not avail.usable:
            can = ", ".join(available(platform, shape, dtype, window))
            raise KernelUnavailable(f"attention {name!r} cannot run on {platform}: {avail.reason}. Runs here: {can}")
        chosen, reason = name, f"{name}: requested"
        if avail.status is Status.EMULATED:
            reason += f"; runs in Pallas interpret mode on {platform} (slow; for checking, not speed)"
    attend = _checked(chosen, load(chosen), platform)
    if mesh is not None and mesh.size > 1:
        attend = _sharded(attend, mesh, batch_axis)
        reason += f"; per device over {mesh.size} devices (shard_map on the batch)"
    return Choice(name, chosen, reason, attend)


@dataclass(frozen=True)
class LayerKernels:
    """The kernels of one encoder at one row length: a Choice per distinct window its layers
    use (None = global). `attend` follows the contract and routes each call by its window."""

    choices: dict[int | None, Choice]

    def attend(self, q, k, v, *, segment_ids, scale=None, window=None):
        return self.choices[window].attend(q, k, v, segment_ids=segment_ids, scale=scale, window=window)

    @property
    def name(self) -> str:
        """What computed the vectors: 'xla_fused', or 'xla_fused+blockwise' (global+local)."""
        names = [self.choices[w].name for w in sorted(self.choices, key=lambda w: (w is not None, w or 0))]
        return "+".join(dict.fromkeys(names))

    def records(self, platform: str) -> list[dict]:
        return [{**c.record(platform), "window": w} for w, c in self.choices.items()]


def for_layers(
    name: str,
    *,
    windows: tuple[int | None, ...] = (None,),
    platform: str | None = None,
    shape: Shape | None = None,
    dtype: str | None = None,
    mesh: Mesh | None = None,
) -> LayerKernels:
    """`get` once per distinct window of a model's layers (ModernBERT: global and local)."""
    return LayerKernels(
        {w: get(name, platform=platform, shape=shape, dtype=dtype, mesh=mesh, window=w) for w in dict.fromkeys(windows)}
    )
