"""The encoder on this worker's devices: weights placed once, one executable per batch shape.

No Beam here; `encode.handler.EncoderHandler` wraps this for RunInference. Batches are split
across every local device (data parallel over a 1-D mesh), so a v5e-4 or an 8-GPU host
uses all its chips.
"""

import atexit
import contextlib
import dataclasses
import functools
import hashlib
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from docbeam.kernels import api as kernels
from docbeam.kernels import compat
from docbeam.model import embed_segments, load_checkpoint
from docbeam.model.token_classification import load_classifier, read_labels, token_scores
from docbeam.pipeline.cost import live_counters
from docbeam.pipeline.encode.packing import PackedBatch, PackSpec
from docbeam.pipeline.io.checkpoints import checkpoint_dir

log = logging.getLogger("docbeam.encoder")

DTYPES = {"float32": jnp.float32, "bfloat16": jnp.bfloat16}
EMBED, TOKEN_CLASSIFICATION = "embed", "token_classification"


@dataclass(frozen=True)
class EncoderSettings:
    model: str | None  # checkpoint directory or gs:// prefix; None = the default model
    model_sha256: str | None
    attention: str
    dtype: str
    pack: PackSpec
    profile_dir: str | None = None  # capture a profiler trace of PROFILE_BATCHES batches here
    leak_threshold_mb: int = 256  # memory growth after warm-up that counts as a leak
    # EMBED: one vector per segment [rows, slots, dim]; TOKEN_CLASSIFICATION: label
    # probabilities per token [rows, seq_len, labels] (--ner-model)
    task: str = EMBED
    # sha256 of every checkpoint file, recorded by the launcher (`checkpoint_files_sha256`):
    # every load on a worker is checked against it. None: not pinned (tests, `docbeam embed`).
    files_sha256: dict[str, str] | None = field(default=None, hash=False)  # compared, not hashed (a dict)

    def local_checkpoint(self) -> Path:
        """The checkpoint's local folder on this machine (downloaded once for gs://), its files
        verified against the launcher's pins: the one way workers find the files they load."""
        return checkpoint_dir(self.model, self.model_sha256, self.files_sha256)


PROFILE_BATCHES = 3


_CACHE_HITS = [0]  # JAX's persistent-cache hits in this process (a monitoring event)
_CACHE_WRITES = [0]  # executables JAX wrote to the persistent cache (its "cache_misses" event)


@functools.cache  # once per process: JAX reads the setting at its first compilation
def use_compile_cache() -> str | None:
    """Keep compiled executables on disk ($DOCBEAM_COMPILE_CACHE, default ~/.cache/docbeam/xla;
    `off` disables): every run after the first on a machine loads each batch shape's
    executable instead of compiling it (on the 2-core CPU ~0.3-1 s instead of 1-5 s, 4-5
    shapes a run). A directory that cannot be written is one warning, and no cache."""
    where = os.environ.get("DOCBEAM_COMPILE_CACHE", os.path.expanduser("~/.cache/docbeam/xla"))
    if where.lower() in ("", "off", "none", "0"):
        return None
    try:
        os.makedirs(where, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=where):
            pass
    except OSError as exc:
        log.warning("DOCBEAM_COMPILE_CACHE=%s is not usable (%s): compiling without a cache", where, exc)
        return None
    jax.config.update("jax_compilation_cache_dir", where)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)  # ours: 0.3-5 s each

    def count(event: str, **_) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            _CACHE_HITS[0] += 1
        elif event == "/jax/compilation_cache/cache_misses":
            _CACHE_WRITES[0] += 1

    jax.monitoring.register_event_listener(count)
    return where


@dataclass
class EncodeStats:
    device_seconds: float = 0.0
    compile_seconds: float = 0.0
    compilations: int = 0
    batches: int = 0
    fallbacks: int = 0  # batches recomputed with an exact kernel

    def add(self, other: "EncodeStats") -> None:
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class EncoderRuntime:
    """`compile_for`: devices of another machine to compile for (compile-only TPU devices from
    `kernels.compat.tpu_topology_devices`): the weights stay shapes, nothing runs, and
    `compile_shape` gives what a worker with those devices would compile (`encode.aot`)."""

    def __init__(self, settings: EncoderSettings, compile_for: Sequence[jax.Device] | None = None):
        # gs:// checkpoints are downloaded once per worker machine and sha256-checked.
        self.checkpoint, params = load_checkpoint(settings.local_checkpoint())
        cfg = self.checkpoint.config
        self.labels: tuple[str, ...] = ()
        if settings.task == TOKEN_CLASSIFICATION:
            self.labels = read_labels(self.checkpoint.path)
            params["classifier"] = load_classifier(self.checkpoint.path, len(self.labels), cfg.hidden)
        if settings.pack.seq_len > cfg.max_positions:
            raise ValueError(f"--max-seq-len {settings.pack.seq_len} exceeds the model's {cfg.max_positions} positions")
        self.settings = settings
        # A compile-only TPU client cannot load cache entries (jax 0.10.2: "PjRtCompiler must be
        # constructed with a Client to call DeserializeLoadedExecutable"): no cache there.
        self.compile_only = compile_for is not None
        self.compile_cache = None if self.compile_only else use_compile_cache()
        self.dtype = DTYPES[settings.dtype]
        self.devices = list(compile_for) if compile_for is not None else jax.local_devices()
        self.platform = kernels.platform_of_backend(self.devices[0].platform)
        self.mesh = Mesh(np.array(self.devices), ("data",))
        # A kernel per row length and per attention window (ModernBERT: global and local).
        self.kernels = {n: self._layer_kernels(settings.attention, n) for n in settings.pack.lengths}
        replicated = NamedSharding(self.mesh, PartitionSpec())
        if compile_for is None:
            params = jax.tree.map(lambda a: jnp.asarray(a, self._param_dtype(a)), params)
            self.params = jax.device_put(params, replicated)
        else:
            self.params = jax.tree.map(
                lambda a: jax.ShapeDtypeStruct(a.shape, self._param_dtype(a), sharding=replicated), params
            )
        self._fns = {n: self._jit(k.attend) for n, k in self.kernels.items()}
        self._exact_fns: dict[int, Callable] = {}  # built on first need: see _redo_exactly
        self._executables: dict[tuple[int, int, int], object] = {}
        self._lock = threading.Lock()
        self.stats = EncodeStats()  # the runtime's totals, over every thread
        for n, k in self.kernels.items():
            for w, c in k.choices.items():
                where = "global layers" if w is None else f"local layers (window {w})"
                log.info(
                    "encoder on %d %s device(s), T=%d, %s: attention %s",
                    len(self.devices),
                    self.platform,
                    n,
                    where,
                    c.reason,
                )

    def _layer_kernels(self, attention: str, length: int) -> kernels.LayerKernels:
        cfg = self.checkpoint.config
        shape = (self.settings.pack.rows_for(length), length, cfg.heads, cfg.head_dim)
        return kernels.for_layers(
            attention,
            windows=cfg.windows,
            platform=self.platform,
            shape=shape,
            dtype=self.settings.dtype,
            mesh=self.mesh,
        )

    def _jit(self, attend):
        cfg = self.checkpoint.config
        if self.settings.task == TOKEN_CLASSIFICATION:

            def scores(p, tokens, seg, pos, pool, *, slots: int):
                return token_scores(p, cfg, tokens, seg, pos, attend=attend)

            return jax.jit(scores, static_argnames=("slots",))

        def run(p, tokens, seg, pos, pool, *, slots: int):
            # Every vector leaves L2-normalised (the output contract), whatever the checkpoint's
            # Normalize module says: cosine to the checkpoint's own vector is unchanged.
            return embed_segments(
                p, cfg, tokens, seg, pos, attend=attend, max_segments=slots, pool_mask=pool, unit_norm=True
            )

        return jax.jit(run, static_argnames=("slots",))

    def _redo_exactly(self, batch: PackedBatch) -> np.ndarray:
        """A kernel flagged a result it cannot vouch for (NaN): recompute the batch with `native`."""
        length = batch.shape[1]
        if length not in self._exact_fns:
            self._exact_fns[length] = self._jit(self._layer_kernels("native", length).attend)
        log.warning(
            "attention %s returned NaN for a batch (softmax underflow); recomputed with native",
            self.kernels[length].name,
        )
        out = self._exact_fns[length](self.params, *self._device_args(batch), slots=batch.max_segments)
        return np.asarray(out, dtype=np.float32)[: batch.shape[0]]

    def _param_dtype(self, a: np.ndarray):
        # Layer-norm parameters (1-D) stay float32; matrices follow the compute dtype.
        return jnp.float32 if a.ndim == 1 else self.dtype

    def rows_on_devices(self, rows: int) -> int:
        """Rows rounded up to a multiple of the device count: each device gets whole rows,
        and every kernel runs per device on its own (kernels.get(..., mesh=...))."""
        n = len(self.devices)
        return -(-rows // n) * n

    def _device_args(self, batch: PackedBatch) -> list[jax.Array]:
        # A batch whose rows do not divide over the devices gets empty rows (segment id 0):
        # their vectors are zeros and are dropped; nothing is replicated or gathered.
        extra = self.rows_on_devices(batch.shape[0]) - batch.shape[0]
        sharding = NamedSharding(self.mesh, PartitionSpec("data", None))
        arrays = (batch.tokens, batch.segment_ids, batch.positions, batch.pool_mask)
        return [jax.device_put(np.pad(x, ((0, extra), (0, 0))) if extra else x, sharding) for x in arrays]

    def batch_keys(self) -> list[tuple[int, int, int]]:
        """Every (rows, row length, pooling slots) the packer can hand this runtime: each row
        length's batch row counts (rounded up to whole rows per device)."""
        pack = self.settings.pack
        keys = {
            (self.rows_on_devices(rows), n, pack.segments_for(n)) for n in pack.lengths for rows in pack.shapes_for(n)
        }
        return sorted(keys, key=lambda k: (-k[1], -k[0]))

    def compile_shape(self, key: tuple[int, int, int]):
        """The compiled executable for one batch shape, built exactly as `encode` builds it."""
        return self._compile(self._lower(key))

    def _lower(self, key: tuple[int, int, int]):
        rows, seq, slots = key
        sharding = NamedSharding(self.mesh, PartitionSpec("data", None))
        spec = jax.ShapeDtypeStruct((rows, seq), jnp.int32, sharding=sharding)
        mask = jax.ShapeDtypeStruct((rows, seq), jnp.bool_, sharding=sharding)
        return self._fns[seq].lower(self.params, spec, spec, spec, mask, slots=slots)

    def _cache_marker(self, lowered) -> str | None:
        """docbeam's own note, beside JAX's compile cache, that an executable of this program
        (the lowered text, JAX's version, the devices) is in the cache: JAX says whether it
        loaded one only afterwards, the progress display wants to say so while it happens."""
        if self.compile_cache is None:
            return None
        h = hashlib.sha256(lowered.as_text().encode())
        h.update(f"{jax.__version__} {self.devices[0].device_kind} {len(self.devices)}".encode())
        return os.path.join(self.compile_cache, "docbeam-shapes", h.hexdigest()[:32])

    def _compile(self, lowered):
        if not self.compile_only:
            return lowered.compile()
        # Compile-only devices cannot load persistent-cache entries (see __init__), and another
        # runtime in this process may have switched the cache on: off for this compile.
        with compat.no_persistent_cache():
            return lowered.compile()

    def _executable(self, batch: PackedBatch, stats: "EncodeStats"):
        """One compiled executable per batch shape (rows, row length, pooling slots)."""
        rows, seq = batch.shape
        key = (rows := self.rows_on_devices(rows), seq, batch.max_segments)
        with self._lock:  # RunInference shares one runtime between threads: compile each shape once
            if key not in self._executables:
                t0 = time.perf_counter()
                lowered = self._lower(key)
                marker = self._cache_marker(lowered)
                cached = marker is not None and os.path.exists(marker)
                what = "loading" if cached else "compiling"
                live_counters.note(f"{what} the encoder for batches of [{rows}, {seq}]")
                hits, writes = _CACHE_HITS[0], _CACHE_WRITES[0]
                self._executables[key] = self._compile(lowered)
                stats.compile_seconds += time.perf_counter() - t0
                stats.compilations += 1
                if marker is not None and (_CACHE_HITS[0] > hits or _CACHE_WRITES[0] > writes):
                    with contextlib.suppress(OSError):  # only the display's wording depends on it
                        os.makedirs(os.path.dirname(marker), exist_ok=True)
                        open(marker, "a").close()
                how = f"loaded from {self.compile_cache}" if _CACHE_HITS[0] > hits else "compiled"
                log.info("encoder for [%d, %d] %s in %.1fs", rows, seq, how, time.perf_counter() - t0)
                live_counters.note("")
            return self._executables[key]

    def dispatch(self, batch: PackedBatch, stats: "EncodeStats") -> jax.Array:
        """Start the encoder on a batch; returns without waiting (JAX dispatch is async)."""
        exe = self._executable(batch, stats)
        return exe(self.params, *self._device_args(batch))

    def start(self, batch: PackedBatch) -> "InFlight":
        """Put a batch on the device and return at once (JAX dispatch is asynchronous): the
        caller does host work while it runs, and `finish`es it later."""
        stats = EncodeStats(batches=1)
        self._executable(batch, stats)  # compile outside the device-time window
        self._profile_start()
        return InFlight(batch, self.dispatch(batch, stats), stats)

    def finish(self, job: "InFlight") -> tuple[np.ndarray, str, "EncodeStats"]:
        """Wait for a started batch: [rows, max_segments, dim] float32 (token classification:
        [rows, seq_len, labels]), the kernel that computed it, and its stats (device seconds:
        the time the host waited for the device)."""
        batch, stats = job.batch, job.stats
        t0 = time.perf_counter()
        out = np.asarray(jax.block_until_ready(job.result), dtype=np.float32)[: batch.shape[0]]
        stats.device_seconds += time.perf_counter() - t0
        kernel = self.kernels[batch.shape[1]].name
        if not np.isfinite(out).all():
            out, kernel = self._redo_exactly(batch), "native"
            stats.fallbacks += 1
        with self._lock:
            self.stats.add(stats)
        self._profile_stop()
        return out, kernel, stats

    def encode(self, batches: list[PackedBatch]) -> tuple[list[np.ndarray], list[str], "EncodeStats"]:
        """Per batch: [rows, max_segments, dim] float32 and the kernel that computed it, plus
        these batches' stats. All are started before any is awaited."""
        jobs = [self.start(b) for b in batches]
        done = [self.finish(j) for j in jobs]
        stats = EncodeStats()
        for _, _, s in done:
            stats.add(s)
        return [o for o, _, _ in done], [k for _, k, _ in done], stats

    def _profile_start(self) -> None:
        if self.settings.profile_dir and self.stats.batches == 0 and not _ACTIVE_TRACES:
            jax.profiler.start_trace(self.settings.profile_dir)
            _ACTIVE_TRACES.append(self)
            log.info("profiling %d encoder batches into %s", PROFILE_BATCHES, self.settings.profile_dir)

    def _profile_stop(self) -> None:
        if self in _ACTIVE_TRACES and self.stats.batches >= PROFILE_BATCHES:
            finish_profiles()


@dataclass
class InFlight:
    """A batch on the device: started, not yet finished."""

    batch: PackedBatch
    result: object  # the device array (or a stand-in's future): awaited by `finish`
    stats: "EncodeStats"


_ACTIVE_TRACES: list[EncoderRuntime] = []
_SHARED: dict[EncoderSettings, EncoderRuntime] = {}
_SHARED_LOCK = threading.Lock()


def shared_runtime(settings: EncoderSettings) -> tuple[EncoderRuntime, bool]:
    """The process's runtime for these settings, and whether it was loaded just now. Waves
    (one Beam job each) in one process reuse its weights and compiled executables."""
    with _SHARED_LOCK:
        loaded = settings not in _SHARED
        if loaded:
            _SHARED[settings] = EncoderRuntime(settings)
        return _SHARED[settings], loaded


@atexit.register
def finish_profiles() -> None:
    """Write out a trace still open: a run shorter than the profiling window ends here
    (the launcher calls it after an in-process job; worker processes at exit)."""
    if _ACTIVE_TRACES:
        _ACTIVE_TRACES.clear()
        jax.profiler.stop_trace()
