"""Compile a run's encoder for a TPU worker on any machine, before paying for the worker.

libtpu compiles for TPU topologies without a TPU (`kernels.compat.tpu_topology_devices`).
`compile_worker` builds an `EncoderRuntime` for the worker's compile-only chips (the same
code path, kernel choice per layer and batch shapes as a real worker) and compiles every
batch shape the packer can emit. Per shape: HBM per chip from XLA's memory analysis, FLOPs
and bytes per token from its cost analysis, and the roofline bound those give with the
chip's peak FLOP/s and HBM bandwidth.

These are compiled bounds, not measurements: no TPU ran anything. A Pallas kernel counts in
XLA's cost analysis only through the cost it declares (`pl.CostEstimate`): docbeam's `flash`
and JAX's TPU `flash_attention` declare one; JAX's splash declares none, so its attention is
added from `kernels.spec.attention_cost` (the formula docbeam's flash declares). No Beam here.
"""

import importlib.metadata
import time
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from docbeam.kernels import api as kernels
from docbeam.kernels import compat
from docbeam.pipeline.core.hardware import Accelerator, HardwareError, Worker, catalogue
from docbeam.pipeline.encode import hlo_traffic
from docbeam.pipeline.encode.packing import PackedBatch
from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings


class CompileUnavailable(RuntimeError):
    """libtpu is not installed here (the `tpu` extra): nothing can be compiled for a TPU."""


@dataclass(frozen=True)
class ChipRates:
    """What bounds one chip: peak FLOP/s at the run's dtype, HBM bytes per second and capacity."""

    peak_flops: float
    hbm_bytes_per_s: float
    hbm_bytes: float


@dataclass(frozen=True)
class Target:
    """One TPU worker: its chips' type and count, HBM and rates (hardware.yaml)."""

    accelerator: Accelerator
    worker: Worker

    @property
    def topology(self) -> str:
        return f"{self.accelerator.compile_name}:{self.worker.topology}"

    @property
    def hbm_bytes(self) -> float:
        return self.accelerator.hbm_gb * 2**30

    def peak_flops(self, dtype: str) -> float:
        peak = self.accelerator.peak_tflops
        return (peak.get(dtype) or peak["bfloat16"]) * 1e12

    @property
    def hbm_bytes_per_s(self) -> float:
        return self.accelerator.hbm_gbps * 1e9

    def rates(self, dtype: str) -> ChipRates:
        return ChipRates(self.peak_flops(dtype), self.hbm_bytes_per_s, self.hbm_bytes)


def target(name: str, chips: int) -> Target:
    acc = catalogue().get(name)
    if acc.kind != "tpu" or not acc.compile_name:
        raise HardwareError(f"{name} is not a TPU: only TPU workers can be compiled for on this machine")
    worker = acc.worker(chips)
    if not worker.host_bounds:
        raise HardwareError(f"{name}:{chips} has no chips-per-host bounds in the hardware catalogue")
    return Target(acc, worker)


def devices_for(t: Target) -> list[jax.Device]:
    try:
        import libtpu  # noqa: F401
    except ImportError:
        raise CompileUnavailable(
            "compiling for a TPU needs libtpu: pip install 'docbeam[tpu]' (it compiles on any machine)"
        ) from None
    return compat.tpu_topology_devices(t.topology, t.worker.host_bounds)


@dataclass
class ShapeResult:
    rows: int  # the whole worker's batch (every chip's rows)
    seq_len: int
    slots: int
    kernels: str  # the attention kernel per layer kind
    seconds: float = 0.0
    error: str = ""  # why it did not compile
    argument_bytes: int = 0  # per chip: weights and the batch
    temp_bytes: int = 0
    output_bytes: int = 0
    code_bytes: int = 0
    flops_per_token: float = 0.0
    bytes_per_token: float = 0.0
    bound_tokens_per_s: float = 0.0  # per chip
    limit: str = ""  # "memory" or "compute": what bounds it
    hbm_bytes: float = 0.0  # the chip's
    chips: int = 1  # the rows divide over these
    # compile_worker's `top`: the ops moving the most bytes, then "(all)" (hlo_traffic)
    traffic: tuple[hlo_traffic.Traffic, ...] = ()

    @property
    def used_bytes(self) -> int:
        return self.argument_bytes + self.temp_bytes + self.output_bytes + self.code_bytes

    @property
    def fits(self) -> bool:
        return not self.error and self.used_bytes <= self.hbm_bytes


def uncounted(runtime: EncoderRuntime, rows: int, seq: int) -> tuple[float, float]:
    """(flops, bytes) of the attention calls XLA cannot see: Pallas kernels that declare no
    cost (kernels.uncounted_cost), once per layer, for one chip's rows."""
    cfg = runtime.checkpoint.config
    windows = cfg.layer_windows or (None,) * cfg.layers
    shape, itemsize = (rows, seq, cfg.heads, cfg.head_dim), jnp.dtype(runtime.dtype).itemsize
    flops = moved = 0.0
    for w in windows:
        f, _, b = kernels.uncounted_cost(runtime.kernels[seq].choices[w].name, shape, itemsize, w)
        flops, moved = flops + f, moved + b
    return flops, moved


def measure(compiled, runtime: EncoderRuntime, key: tuple[int, int, int], rates: ChipRates) -> dict:
    """Memory and cost analysis of one compiled executable (both describe one chip's program),
    plus what Pallas kernels without a declared cost add."""
    rows, seq, _ = key
    mem = compiled.memory_analysis()
    cost = compat.cost_analysis(compiled)
    per_chip = rows // len(runtime.devices)  # rows divide over the chips
    extra_flops, extra_bytes = uncounted(runtime, per_chip, seq)
    tokens = per_chip * seq
    flops = (float(cost.get("flops", 0.0)) + extra_flops) / tokens
    moved = (float(cost.get("bytes accessed", 0.0)) + extra_bytes) / tokens
    compute, memory = rates.peak_flops / flops, rates.hbm_bytes_per_s / moved
    return dict(
        argument_bytes=mem.argument_size_in_bytes,
        temp_bytes=mem.temp_size_in_bytes,
        output_bytes=mem.output_size_in_bytes - mem.alias_size_in_bytes,
        code_bytes=mem.generated_code_size_in_bytes,
        flops_per_token=flops,
        bytes_per_token=moved,
        bound_tokens_per_s=min(compute, memory),
        limit="memory" if memory < compute else "compute",
    )


def compile_worker(
    settings: EncoderSettings,
    t: Target,
    on_result: Callable[[ShapeResult], None] = lambda r: None,
    keys: list[tuple[int, int, int]] | None = None,
    top: int = 0,
) -> list[ShapeResult]:
    """Every batch shape a worker of `t` would compile for these settings (or `keys`); with
    `top`, each result says which `top` ops of its compiled HLO move the most bytes."""
    devices = devices_for(t)
    runtime = EncoderRuntime(settings, compile_for=devices)
    results = []
    for key in keys or runtime.batch_keys():
        rows, seq, slots = key
        r = ShapeResult(rows, seq, slots, _kernel_names(runtime, seq), hbm_bytes=t.hbm_bytes, chips=t.worker.chips)
        t0 = time.perf_counter()
        try:
            compiled = runtime.compile_shape(key)
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # XLA and Mosaic raise many types; each is this shape's finding
            r.error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
        else:
            for name, value in measure(compiled, runtime, key, t.rates(settings.dtype)).items():
                setattr(r, name, value)
            if top:
                r.traffic = tuple(hlo_traffic.where_bytes_go(compiled.as_text(), top))
        r.seconds = time.perf_counter() - t0
        on_result(r)
        results.append(r)
    return results


def _kernel_names(runtime: EncoderRuntime, seq: int) -> str:
    choices = runtime.kernels[seq].choices
    return ", ".join(c.name if w is None else f"{c.name} (window {w})" for w, c in choices.items())


def measure_here(
    settings: EncoderSettings,
    rates: ChipRates,
    keys: list[tuple[int, int, int]],
    batches: int = 8,
    repeats: int = 3,
) -> list[tuple[ShapeResult, list[float]]]:
    """On this machine's own accelerator: each shape's compiled bound (as `compile_worker`
    gives it for a TPU) beside the tokens/s per chip the runtime measures running it, through
    `EncoderRuntime.encode` as a worker calls it (batches in flight together, vectors copied
    back). Rows hold one segment each, every token real. One timing per repeat, each over
    `batches` batches after a warm-up."""
    runtime = EncoderRuntime(settings)
    vocab = runtime.checkpoint.config.vocab_size
    rng = np.random.default_rng(0)
    out = []
    for key in keys:
        rows, seq, slots = key
        r = ShapeResult(rows, seq, slots, _kernel_names(runtime, seq), hbm_bytes=rates.hbm_bytes)
        t0 = time.perf_counter()
        for name, value in measure(runtime.compile_shape(key), runtime, key, rates).items():
            setattr(r, name, value)
        r.seconds = time.perf_counter() - t0
        ones = np.ones((rows, seq), np.int32)
        batch = PackedBatch(
            tokens=rng.integers(1000, vocab, (rows, seq), dtype=np.int32),
            segment_ids=ones,
            positions=np.broadcast_to(np.arange(seq, dtype=np.int32), (rows, seq)).copy(),
            pool_mask=ones.astype(bool),
            max_segments=slots,
        )
        runtime.encode([batch])  # compiles this shape and warms it
        per_chip = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            runtime.encode([batch] * batches)
            per_chip.append(rows * seq * batches / (time.perf_counter() - t0) / len(runtime.devices))
        out.append((r, per_chip))
    return out


def compile_kernel(name: str, t: Target, shape: tuple[int, int, int, int], dtype: str, window: int | None):
    """Attention kernel `name` compiled for the chips of `t` at `shape`, the batch split over
    the chips as the encoder runs it. Raises what the kernel choice or the compiler raises."""
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.array(devices_for(t)), ("data",))
    sharded = NamedSharding(mesh, PartitionSpec("data"))
    q = jax.ShapeDtypeStruct(shape, jnp.dtype(dtype), sharding=sharded)
    seg = jax.ShapeDtypeStruct(shape[:2], jnp.int32, sharding=sharded)
    k = kernels.get(name, platform="tpu", shape=shape, dtype=dtype, mesh=mesh, window=window)
    return jax.jit(lambda a, b, c, s: k.attend(a, b, c, segment_ids=s, window=window)).lower(q, q, q, seg).compile()


def kernel_compiles(name: str, t: Target, shape: tuple[int, int, int, int], dtype: str, window: int | None) -> str:
    """'' when `compile_kernel` succeeds, else why not, in one line."""
    try:
        compile_kernel(name, t, shape, dtype, window)
    except kernels.KernelUnavailable as exc:
        return str(exc).split(": ", 1)[-1].split(". Runs here")[0]
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # XLA and Mosaic raise many types; each is this kernel's finding
        return f"does not compile: {type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"
    return ""


def largest_batch(settings: EncoderSettings, t: Target) -> tuple[int, int, int]:
    """The full batch of the longest rows on a worker of `t`: what most tokens run through."""
    pack = settings.pack
    chips = t.worker.chips
    rows = -(-pack.rows_for(pack.seq_len) // chips) * chips
    return rows, pack.seq_len, pack.segments_for(pack.seq_len)


def version_mismatch() -> str:
    """'' when this machine's jax and libtpu are the ones the worker image pins, else why not:
    a compile proves something about the workers only with their compiler."""
    pinned = catalogue().worker_image
    here = {}
    for dist in ("jax", "libtpu"):
        try:
            here[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            here[dist] = "not installed"
    differ = [f"{d} {here[d]} here, {pinned[d]} on workers" for d in pinned if not here[d].startswith(pinned[d])]
    return "; ".join(differ)
