"""Find, check and choose attention implementations.

Each implementation lives in its own module exporting `KERNEL` (a `KernelSpec`).
Modules are imported lazily: an adapter whose upstream API moved fails to import,
shows up as unavailable with the import error, and breaks nothing else.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp

from kernels.spec import KernelSpec

# name -> module; adding a kernel is one line here and one module beside this file.
KERNELS: dict[str, str] = {
    "reference": "kernels.reference",
    "native": "kernels.native",
    "xla_fused": "kernels.xla_fused",
    "flash": "kernels.flash",
    "tpu_flash": "kernels.tpu_flash",
    "splash": "kernels.splash",
    "gpu_mha": "kernels.gpu_mha",
    "tokamax": "kernels.tokamax_attention",
}

Shape = tuple[int, int, int, int]  # [batch, seq, heads, head_dim]


class KernelUnavailable(ValueError):
    """An explicitly requested attention implementation cannot run here."""


@dataclass(frozen=True)
class Choice:
    requested: str
    name: str
    reason: str
    attend: Callable[..., jax.Array]


def names() -> list[str]:
    return list(KERNELS)


def platform_of_backend(backend: str | None = None) -> str:
    """JAX backend name -> 'cpu' | 'gpu' | 'tpu'."""
    backend = backend or jax.default_backend()
    return {"cuda": "gpu", "rocm": "gpu"}.get(backend, backend)


def _load(name: str) -> KernelSpec:
    if name not in KERNELS:
        raise KernelUnavailable(f"unknown attention {name!r}; choose one of: auto, {', '.join(KERNELS)}")
    return importlib.import_module(KERNELS[name]).KERNEL


def why_not(name: str, platform: str, shape: Shape | None = None, dtype: str | None = None) -> str | None:
    """None if `name` runs here for this shape and dtype, else the reason it does not."""
    try:
        spec = _load(name)
    except ImportError as exc:  # an upstream API moved or an extra is not installed
        return f"cannot import: {exc}"
    return spec.runs_here(platform, shape, dtype)


def available(platform: str | None = None, shape: Shape | None = None, dtype: str | None = None) -> list[str]:
    platform = platform or platform_of_backend()
    return [n for n in KERNELS if why_not(n, platform, shape, dtype) is None]


def report(platform: str | None = None, shape: Shape | None = None, dtype: str | None = None) -> list[dict]:
    """One row per implementation: name, available, why not, summary (for `docbeam kernels`)."""
    platform = platform or platform_of_backend()
    rows = []
    for name in KERNELS:
        why = why_not(name, platform, shape, dtype)
        summary = ""
        if why is None or not why.startswith("cannot import"):
            spec = _load(name)
            summary = spec.summary
            if why is None and platform in spec.emulated_on:
                why = f"runs, emulated (Pallas interpret mode on {platform}): for checking, not speed"
        rows.append(
            {
                "name": name,
                "available": why is None or why.startswith("runs, emulated"),
                "note": why or "",
                "summary": summary,
            }
        )
    return rows


def _scoped(name: str, attend: Callable[..., jax.Array]) -> Callable[..., jax.Array]:
    """Wrap in a named scope so profiler traces show which kernel ran where."""

    def scoped(q, k, v, *, segment_ids, scale=None):
        with jax.named_scope(f"attention_{name}"):
            return attend(q, k, v, segment_ids=segment_ids, scale=scale)

    scoped.__name__ = f"attend_{name}"
    return scoped


def _auto(platform: str, shape: Shape | None, dtype: str | None) -> tuple[str, str]:
    seq = shape[1] if shape else None
    if platform == "tpu":
        if seq is not None and seq >= 128 and seq % 128 == 0 and why_not("splash", platform, shape, dtype) is None:
            return "splash", f"TPU, T={seq} divisible by block 128: splash (block-sparse, skips masked blocks)"
        return "native", f"TPU, T={seq} not a multiple of 128 or splash unavailable: XLA attention"
    if platform == "gpu":
        if dtype is not None and jnp.dtype(dtype) in (jnp.bfloat16, jnp.float16):
            return "native", f"GPU, {dtype}: cuDNN fused attention through jax.nn.dot_product_attention"
        if seq is not None and seq >= 1024 and why_not("flash", platform, shape, dtype) is None:
            return "flash", f"GPU, float32, T={seq}: flash keeps memory O(T) instead of O(T^2)"
        return "native", f"GPU, {dtype or 'float32'}, T={seq}: XLA attention (cuDNN needs 16-bit inputs)"
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
) -> Choice:
    """Resolve `name` ('auto' or an implementation) for this platform, shape and dtype.

    'auto' never fails. An explicit name that cannot run here raises KernelUnavailable
    naming what is missing and what can run instead; it is never silently substituted.
    """
    platform = platform or platform_of_backend()
    if name == "auto":
        chosen, reason = _auto(platform, shape, dtype)
        if why_not(chosen, platform, shape, dtype) is not None:  # should not happen; stay safe
            chosen, reason = "reference", f"{reason}; {chosen} unavailable, using reference"
        return Choice("auto", chosen, f"{chosen}: {reason}", _scoped(chosen, _load(chosen).attend))
    why = why_not(name, platform, shape, dtype)
    if why is not None:
        can = ", ".join(available(platform, shape, dtype))
        raise KernelUnavailable(f"attention {name!r} cannot run on {platform}: {why}. Runs here: {can}")
    spec = _load(name)
    reason = f"{name}: requested"
    if platform in spec.emulated_on:
        reason += f"; runs in Pallas interpret mode on {platform} (slow; for checking, not speed)"
    return Choice(name, name, reason, _scoped(name, spec.attend))
