"""Every version-sensitive JAX API the kernels use, in one file.

Pallas renames things often (BlockSpec argument order in 0.4.31; compiler params went
mosaic_params -> compiler_params -> TPUCompilerParams -> CompilerParams; pl.load/pl.store
removed in 0.9; TPUInterpretParams -> InterpretParams), and shard_map moved from
jax.experimental.shard_map to jax.shard_map with `check_rep` renamed `check_vma`. Kernels
call these helpers only, and tests/kernels/test_compat.py pins their behaviour, so an
upgrade breaks here, loudly, and nowhere else. Tested with jax 0.10.2.
"""

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

import jax
from jax.experimental import pallas as pl
from jax.sharding import Mesh, PartitionSpec

TESTED_JAX = "0.10.2"


def block_spec(block_shape: Sequence[int | None], index_map: Callable[..., tuple]) -> pl.BlockSpec:
    """A block of `block_shape` (None squeezes that dimension) placed by `index_map(*grid_idx)`."""
    return pl.BlockSpec(tuple(block_shape), index_map)


def interpret(platform: str) -> bool:
    """Pallas on CPU only runs in interpret mode ("Only interpret mode is supported on CPU")."""
    return platform == "cpu"


def compiler_params(platform: str, *, num_warps: int = 4, num_stages: int = 2, parallel_dims: int = 0) -> Any:
    """Per-backend compiler parameters, or None where there are none (CPU interpret)."""
    if platform == "gpu":
        from jax.experimental.pallas import triton as plgpu

        return plgpu.CompilerParams(num_warps=num_warps, num_stages=num_stages)
    if platform == "tpu":
        from jax.experimental.pallas import tpu as pltpu

        semantics: tuple[Literal["parallel"], ...] = tuple("parallel" for _ in range(parallel_dims))
        return pltpu.CompilerParams(dimension_semantics=semantics)
    return None


@contextlib.contextmanager
def tpu_interpret_mode(enabled: bool) -> Iterator[None]:
    """Run TPU-only Pallas kernels (JAX's flash and splash) on CPU, emulated."""
    if not enabled:
        yield
        return
    from jax.experimental.pallas import tpu as pltpu

    with pltpu.force_tpu_interpret_mode():
        yield


def pallas_call(kernel: Callable, *, cost: tuple[int, int, int] | None = None, **kwargs: Any) -> Callable:
    """`cost`: (flops, transcendentals, bytes accessed), declared so XLA's cost analysis counts
    the kernel (a Pallas call is opaque to it otherwise)."""
    if cost is not None:
        flops, transcendentals, moved = cost
        kwargs["cost_estimate"] = pl.CostEstimate(flops=flops, transcendentals=transcendentals, bytes_accessed=moved)
    return pl.pallas_call(kernel, **kwargs)


program_id = pl.program_id
ds = pl.ds


def shard_over_batch(fn: Callable, mesh: Mesh, axis: str, n_batched: int) -> Callable:
    """`fn(*arrays)` run once per device on its slice of the batch axis (axis 0 of every
    argument and of the result). A Pallas call is opaque to XLA's partitioner: without this,
    a sharded batch would be gathered onto every device (or refused) around the kernel."""
    specs = tuple(PartitionSpec(axis) for _ in range(n_batched))
    # check_vma=False: Pallas calls carry no varying-manual-axes annotations to check.
    return jax.shard_map(fn, mesh=mesh, in_specs=specs, out_specs=PartitionSpec(axis), check_vma=False)


def tpu_topology_devices(topology: str, chips_per_host_bounds: Sequence[int]) -> list[jax.Device]:
    """Compile-only devices of one TPU host, e.g. ("v5e:2x2", (2, 2, 1)): XLA:TPU and Mosaic
    compile for them on any machine where libtpu is installed; nothing can run on them."""
    from jax.experimental import topologies

    # Compile-only: no chip is opened, so libtpu's one-process lock (/tmp/libtpu_lockfile) need
    # not stop a second compile (the test suite's workers, a user's two shells).
    os.environ.setdefault("ALLOW_MULTIPLE_LIBTPU_LOAD", "1")
    wrap = (False,) * len(chips_per_host_bounds)
    desc = topologies.get_topology_desc(
        platform="tpu",
        topology_name=topology,
        chip_config_name="default",
        chips_per_host_bounds=tuple(chips_per_host_bounds),
        num_slices=1,
        wrap=wrap,
    )
    return list(desc.devices)


@contextlib.contextmanager
def no_persistent_cache() -> Iterator[None]:
    """Compile without JAX's persistent cache, then restore it. jax 0.10.2 decides once per
    process whether the cache is used; reset_cache makes it decide again on the next compile."""
    from jax.experimental.compilation_cache import compilation_cache

    was = jax.config.jax_enable_compilation_cache  # type: ignore[attr-defined]
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    try:
        yield
    finally:
        jax.config.update("jax_enable_compilation_cache", was)
        compilation_cache.reset_cache()


def cost_analysis(compiled: Any) -> dict:
    """XLA's cost analysis of a compiled executable as one dict ("flops", "bytes accessed", ...):
    some jax versions return a list of one."""
    cost = compiled.cost_analysis()
    return cost[0] if isinstance(cost, list) else cost
