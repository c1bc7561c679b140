"""Host work on every core of a worker: a pool of processes inside the Beam worker's process.

The process Beam runs the job in keeps the encoder (and with it the accelerator: it is the only
one that starts a JAX backend); parse and chunk, the host stages that cost CPU, run in
`--host-processes` pool processes beside it. A stage's DoFn is the same code in both places:
`HostPooled.process` hands its element to a pool process, which runs the DoFn's `work` on it
with the meters recording (cost.metering.record_updates); the outputs and the meter updates
come back, the updates are replayed on this process's meters, the outputs go on in the order
their elements came. With one host process (the default on a CPU worker, where the encoder
binds and uses every core) `work` runs in place and no pool exists.

Why not Beam's own multi-process machinery (an SDK process per core sharing one model process,
`apache_beam.utils.multi_process_shared`): measured in the README (Feeding the chip), Beam's
local multi-process runner moves every element through the launcher and made a 2-core run
slower (0.57x); a pool inside the worker is the same mechanism locally and on Dataflow (one
SDK process per worker, as docbeam's accelerator jobs run), and measured faster here.
"""

import collections
import concurrent.futures
import multiprocessing
import os
import pickle
import threading
from typing import Any

_pools: dict[int, concurrent.futures.ProcessPoolExecutor] = {}
_lock = threading.Lock()
_in_pool = False  # set in the pool's processes: their DoFns do the work themselves


def size(requested: int) -> int:
    """--host-processes as a pool size: 0 means every core of this worker but the one the
    encoding process keeps (as hardware.HostRates counts a worker's host rate); 1, no pool."""
    return requested or max((os.cpu_count() or 1) - 1, 1)


def pool(processes: int) -> concurrent.futures.ProcessPoolExecutor | None:
    """This process's pool of `processes` (None: one host process, or this is a pool process).
    Pools live as long as the process: a worker runs many bundles and waves, and starting a
    pool process costs its imports (~2 CPU s)."""
    if processes <= 1 or _in_pool:
        return None
    with _lock:
        if processes not in _pools:
            # Not fork: this process may hold an accelerator, XLA's and gRPC's threads. A fork
            # server imports the host stages' modules once (~2.5 CPU s: Beam, JAX's modules, the
            # tokenizer) and forks each pool process from itself, where spawn would pay it in each.
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload([__name__, "docbeam.pipeline.graph.dofns"])  # the stages' code
            _pools[processes] = concurrent.futures.ProcessPoolExecutor(processes, ctx, initializer=_start)
        return _pools[processes]


def warm(processes: int) -> None:
    """Start the pool's processes now, while this process plans and compiles, not when the
    first file is read (0: nothing yet; a local run's count follows from its platform, known
    after planning)."""
    if processes and (p := pool(processes)) is not None:
        for _ in range(processes):
            p.submit(probe)


def _start() -> None:
    global _in_pool
    _in_pool = True
    # Never the accelerator (only the Beam worker's process drives it), one core's worth each.
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["RAYON_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    from docbeam.pipeline.cost import metering

    metering.record_updates()


_dofns: collections.OrderedDict[str, Any] = collections.OrderedDict()
_KEEP = 4  # DoFns set up in a pool process (a test session runs many jobs): the latest few


def work(key: str, blob: bytes, element: Any) -> tuple[list, list]:
    """In a pool process: the pickled DoFn `blob` (set up once, kept under `key`) on `element`;
    its outputs and its meters' updates."""
    from docbeam.pipeline.cost import metering

    dofn = _dofns.get(key)
    if dofn is None:
        dofn = _dofns[key] = pickle.loads(blob)
        dofn.setup()
        while len(_dofns) > _KEEP:
            _dofns.popitem(last=False)[1].teardown()
    _dofns.move_to_end(key)
    return list(dofn.work(element)), metering.recorded()


def probe() -> dict:
    """What a pool process has loaded (tests: never a JAX backend)."""
    import sys

    backends = {}
    if "jax" in sys.modules:
        from jax._src import xla_bridge

        backends = dict(xla_bridge._backends)
    return {"pid": os.getpid(), "jax_backends": sorted(backends), "jax_platforms": os.environ.get("JAX_PLATFORMS")}


def shutdown() -> None:
    """End this process's pools (a benchmark measures each run with a fresh one)."""
    with _lock:
        for p in _pools.values():
            p.shutdown()
        _pools.clear()
