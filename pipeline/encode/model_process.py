"""The one process that owns the accelerator when a worker's host work runs in several processes.

On an accelerator worker, host processes (one per core) read, parse, chunk, pack and assemble;
one process holds the model and the chips, and every host process's encoder stage sends it its
packed batches. The process is Beam's own shared object (apache_beam.utils.multi_process_shared,
what RunInference's `share_model_across_processes` uses), named by a tag per run:

- a remote worker (Dataflow): the first host process to ask starts it as a process of its own
  (`spawn=True`), which does nothing but the encoder;
- a local run: the launcher serves it from its own process (`spawn=False`), which already
  initialised this machine's accelerator to choose the kernels (a second process could not
  take a TPU host's chips, and would take GPU memory twice).

A batch crosses as its four [rows, seq] arrays (int32, and the bool pooling mask) and its
vectors come back as float32, pickled by multiprocessing over a local TCP connection with
Nagle off (encode.nodelay); the handler meters the time a call spends outside the model
(`ipc_us`). Host processes never initialise a JAX backend.
"""

import contextlib
import dataclasses
import functools
import glob
import os
import tempfile
import time
from collections.abc import Callable
from typing import Any

from apache_beam.utils.multi_process_shared import MultiProcessShared

from docbeam.pipeline.cost.memwatch import device_bytes_in_use
from docbeam.pipeline.encode import nodelay
from docbeam.pipeline.encode.packing import PackedBatch
from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings, EncodeStats, Serving, shared_runtime


@dataclasses.dataclass(frozen=True)
class Result:
    """One batch's answer from the model process."""

    vectors: Any  # np.ndarray [rows, slots, dim] float32 ([rows, seq, labels] for a token classifier)
    kernel: str
    stats: EncodeStats
    fed_rows: int  # rows the devices ran, with the empty rows that even them out
    model_seconds: float  # the call's time inside the model process
    device_bytes: int | None  # the accelerator's memory in use (None on a CPU), for the leak watch


class ModelServer:
    """The object the model process serves: a runtime and one method a batch."""

    def __init__(self, make_runtime: Callable[[], Any]):
        self.runtime = make_runtime()

    def run(self, batch: PackedBatch) -> Result:
        t0 = time.perf_counter()
        out, kernel, stats = self.runtime.finish(self.runtime.start(batch))
        fed_rows = self.runtime.rows_on_devices(batch.shape[0])
        return Result(out, kernel, stats, fed_rows, time.perf_counter() - t0, device_bytes_in_use())

    def pid(self) -> int:
        return os.getpid()


def _serve(make_runtime: Callable[[], Any]) -> ModelServer:
    nodelay.install()  # in a spawned model process: before it accepts its first connection
    return ModelServer(make_runtime)


def load_runtime(settings: EncoderSettings) -> EncoderRuntime:
    """The encoder runtime of `settings`, in the model process (module level: pickled by name)."""
    return shared_runtime(dataclasses.replace(settings, serving=None))[0]


# Where the model processes of this machine leave their addresses (one file per tag).
ADDRESSES = os.path.join(tempfile.gettempdir(), "docbeam-model-processes")


def handle(serving: Serving, name: str, make_runtime: Callable[[], Any]) -> MultiProcessShared:
    """Beam's handle on the model process `serving.tag`/`name`; `acquire()` starts or reaches it."""
    nodelay.install()
    os.makedirs(ADDRESSES, exist_ok=True)
    return MultiProcessShared(
        functools.partial(_serve, make_runtime),
        tag=f"{serving.tag}-{name}",
        path=ADDRESSES,
        always_proxy=True,
        spawn_process=serving.spawn,
    )


def forget(serving: Serving) -> None:
    """Remove the address files of a run's model processes (once it is over)."""
    for name in glob.glob(os.path.join(ADDRESSES, glob.escape(serving.tag) + "-*")):
        with contextlib.suppress(OSError):
            os.remove(name)


def strip(batch: PackedBatch) -> PackedBatch:
    """The part of a batch the model reads: its arrays, without the segments (their text stays here)."""
    return dataclasses.replace(batch, slots=[])
