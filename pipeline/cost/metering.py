"""Per-stage metering as Beam metrics, under the namespace `docbeam.<stage>`.

Counters are integers, so seconds are recorded in microseconds (`*_us`). CPU time is the
process's (time.process_time), so it includes XLA's own threads during the encoder.
They show in `result.metrics()` on every runner and as custom counters on Dataflow.
"""

import contextlib
import resource
import time
from collections.abc import Iterator

from apache_beam.metrics import Metrics

from docbeam.pipeline.cost import live_counters

NAMESPACE = "docbeam"
COUNTERS = (
    "elements_in",
    "elements_out",
    "bytes_in",
    "bytes_out",
    "wall_us",
    "cpu_us",
    "device_us",
    "tokens",
    "pad_tokens",
    "compilations",
    "compile_us",
    "rejected",
    "skipped",
    "retries",
    "leak_warnings",
    "fallbacks",
    "model_loads",
)


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


class StageMeter:
    def __init__(self, stage: str):
        self.stage = stage
        ns = f"{NAMESPACE}.{stage}"
        self._counters = {name: Metrics.counter(ns, name) for name in COUNTERS}
        self._ns = ns
        self._peak_rss = Metrics.gauge(ns, "peak_rss_bytes")

    def add(self, **values: float) -> None:
        for name, value in values.items():
            if value:
                self._counters[name].inc(int(value))
        live_counters.record(self.stage, values)

    def live(self, **values: float) -> None:
        """Counters for the progress display only (live_counters), not Beam metrics: progress
        inside a document, which the cost report has no use for."""
        live_counters.record(self.stage, values)

    def count(self, name: str, value: int = 1) -> None:
        """A counter named at run time (e.g. skipped_<reason>), beside the fixed COUNTERS."""
        Metrics.counter(self._ns, name).inc(int(value))

    def gauge(self, name: str, value: int) -> None:
        Metrics.gauge(self._ns, name).set(int(value))

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        """Wall and CPU time of the enclosed work (keep `yield`s of a DoFn outside it);
        also refreshes the stage's peak-RSS gauge (getrusage: about a microsecond)."""
        w0, c0 = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.add(wall_us=(time.perf_counter() - w0) * 1e6, cpu_us=(time.process_time() - c0) * 1e6)
            self._peak_rss.set(peak_rss_bytes())
