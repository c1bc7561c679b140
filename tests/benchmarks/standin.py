"""A measurement stand-in for the encoder, for benchmarks and tests only (nothing in docbeam can
reach it): unit vectors of the right shape without computing anything, and optionally each
batch held as long as an accelerator would hold it.

A module of its own, imported by reference: Beam pickles a handler defined in __main__ by
value, and its copy would count into a list of its own.
"""

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from docbeam.pipeline.cost import live_counters
from docbeam.pipeline.encode.handler import EncoderHandler
from docbeam.pipeline.encode.runtime import EncodeStats, InFlight

# Per stand-in batch: host work (chunked tokens) the pipeline did while the batch was "on the
# device". Above zero, host and device overlapped, so a run takes about max(host, device).
# Module-level: Beam runs an unpickled copy of the handler, in this same process.
HOST_WORK_DURING: list[int] = []


class StandInRuntime:
    """Measurement stand-in for the encoder: unit vectors, no compute. A batch "runs" on a
    device thread of its own for `device_s_per_token` x its tokens, as an accelerator would,
    while the caller's thread goes on with host work."""

    def __init__(self, dim: int, device_s_per_token: float):
        self.dim, self.device_s_per_token = dim, device_s_per_token
        self.stats = EncodeStats()
        self.device = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stand-in-device")

    def _run(self, batch) -> np.ndarray:
        time.sleep(batch.tokens.size * self.device_s_per_token)
        return np.full((batch.shape[0], batch.max_segments, self.dim), self.dim**-0.5, np.float32)

    def rows_on_devices(self, rows: int) -> int:
        return rows  # one stand-in device: no empty rows

    def start(self, batch) -> InFlight:
        job = InFlight(batch, self.device.submit(self._run, batch), EncodeStats(batches=1))
        job.host_before = live_counters.snapshot()["chunked_tokens"]
        return job

    def finish(self, job: InFlight):
        out = job.result.result()
        job.stats.device_seconds += job.batch.tokens.size * self.device_s_per_token
        HOST_WORK_DURING.append(live_counters.snapshot()["chunked_tokens"] - job.host_before)
        self.stats.add(job.stats)
        return out, "stand-in", job.stats


class StandInHandler(EncoderHandler):
    def __init__(self, settings, dim: int, device_s_per_token: float = 0.0):
        super().__init__(settings)
        self.dim, self.device_s_per_token = dim, device_s_per_token

    def load_model(self):
        return StandInRuntime(self.dim, self.device_s_per_token)
