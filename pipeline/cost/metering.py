"""Per-stage metering as Beam metrics, under the namespace `docbeam.<stage>`.

Counters are integers, so seconds are recorded in microseconds (`*_us`). CPU time is the
process's (time.process_time), so it includes XLA's own threads during the encoder.
They show in `result.metrics()` on every runner and as custom counters on Dataflow.

A DoFn meters its stage with `@metered` on its `process` (see there); what only the stage
knows (tokens, skipped records) it adds with one `self.meter.add(...)`. Time is billed to
one stage at a time: a span timed inside another (an extractor's work inside the chunk
stage) is taken out of the outer one.
"""

import contextlib
import functools
import resource
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput

from docbeam.pipeline.core.tables import ERRORS
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


# In a host-pool process (graph.host_pool): the meters' updates, sent back with each result and
# replayed on the Beam worker's meters, which alone reach Beam's metrics.
_recorded: list | None = None
_replayed: dict[str, "StageMeter"] = {}


def record_updates() -> None:
    global _recorded
    _recorded = []


def recorded() -> list:
    assert _recorded is not None, "record_updates() first"
    updates = list(_recorded)
    _recorded.clear()
    return updates


def replay(updates: list) -> None:
    for stage, method, args, kwargs in updates:
        if stage not in _replayed:
            _replayed[stage] = StageMeter(stage)
        getattr(_replayed[stage], method)(*args, **kwargs)


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


class StageMeter:
    def __init__(self, stage: str):
        self.stage = stage
        ns = f"{NAMESPACE}.{stage}"
        self._counters = {name: Metrics.counter(ns, name) for name in COUNTERS}
        self._ns = ns
        self._peak_rss = Metrics.gauge(ns, "peak_rss_bytes")

    def _recording(self, method: str, *args: Any, **kwargs: Any) -> bool:
        if _recorded is None:
            return False
        _recorded.append((self.stage, method, args, kwargs))
        return True

    def add(self, **values: float) -> None:
        if self._recording("add", **values):
            return
        for name, value in values.items():
            if value:
                self._counters[name].inc(int(value))
        live_counters.record(self.stage, values)

    def live(self, **values: float) -> None:
        """Counters for the progress display only (live_counters), not Beam metrics: progress
        inside a document, which the cost report has no use for."""
        if self._recording("live", **values):
            return
        live_counters.record(self.stage, values)

    def count(self, name: str, value: int = 1) -> None:
        """A counter named at run time (e.g. skipped_<reason>), beside the fixed COUNTERS."""
        if self._recording("count", name, value):
            return
        Metrics.counter(self._ns, name).inc(int(value))

    def gauge(self, name: str, value: int) -> None:
        if self._recording("gauge", name, value):
            return
        Metrics.gauge(self._ns, name).set(int(value))

    @contextlib.contextmanager
    def timed(self) -> Iterator[None]:
        """Wall and CPU time of the enclosed work, less that of spans timed inside it (keep
        `yield`s of a DoFn outside it); also refreshes the stage's peak-RSS gauge."""
        span = _Span()
        try:
            with span:
                yield
        finally:
            self._spent(span)

    def counted(self, work: Callable[[], list], inputs: int = 0) -> list:
        """`work()`, timed under this stage (one nested in another's: an extractor's work in
        the chunk stage), the length of what it returns counted as elements_out."""
        with self.timed():
            out = work()
        self.add(elements_in=inputs, elements_out=len(out))
        return out

    def _spent(self, span: "_Span", **values: float) -> None:
        """Bill `span`'s time so far (and `values`) to the stage; refresh the peak-RSS gauge
        (getrusage: about a microsecond)."""
        self.add(wall_us=span.wall * 1e6, cpu_us=span.cpu * 1e6, **values)
        span.wall = span.cpu = 0.0
        if not self._recording("gauge", "peak_rss_bytes", peak_rss_bytes()):
            self._peak_rss.set(peak_rss_bytes())

    def drive(
        self,
        outputs: Iterable,
        bytes_out: Callable[[Any], int] | None = None,
        count_out: bool = True,
        every: int = 64,
        items_out: Callable[[Any], int] | None = None,
    ) -> Iterator:
        """Hand on a stage's outputs, timing only the steps that produce them: the time a
        consumer takes with an item (with a fused runner, the downstream stages) is not the
        stage's. Main outputs are counted as elements_out (`items_out` of each where one
        output carries several: a list of segments; their `bytes_out` as bytes_out), outputs
        to errors/ as rejected; the counts and times go to the meter every `every` outputs
        (the meter is not free) and at the end."""
        span, it = _Span(), iter(outputs)
        n_out = n_bytes = n_rejected = pending = 0
        try:
            while True:
                with span:
                    try:
                        out = next(it)
                    except StopIteration:
                        return
                if isinstance(out, TaggedOutput):
                    n_rejected += out.tag == ERRORS
                elif count_out:
                    n_out += items_out(out) if items_out else 1
                    n_bytes += bytes_out(out) if bytes_out else 0
                pending += 1
                if pending == every:
                    self._spent(span, elements_out=n_out, bytes_out=n_bytes, rejected=n_rejected)
                    n_out = n_bytes = n_rejected = pending = 0
                yield out
        finally:
            self._spent(span, elements_out=n_out, bytes_out=n_bytes, rejected=n_rejected)


class _Span:
    """Wall and CPU seconds spent inside `with span:` on this thread (it may be entered
    again: the times add up), less those of spans entered inside it, so that no second is
    billed to two stages."""

    __slots__ = ("wall", "cpu", "_w0", "_c0")
    _open = threading.local()  # .stack: the spans open on this thread, innermost last

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def __enter__(self) -> "_Span":
        stack = self._open.__dict__.setdefault("stack", [])
        stack.append(self)
        self._w0, self._c0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        wall, cpu = time.perf_counter() - self._w0, time.process_time() - self._c0
        stack = self._open.stack
        stack.pop()
        self.wall += wall
        self.cpu += cpu
        if stack:  # the enclosing stage's time excludes this one's
            stack[-1].wall -= wall
            stack[-1].cpu -= cpu


def metered(
    inputs: Literal["element", "batch"] | None = "element",
    bytes_in: Callable[[Any], int] | None = None,
    bytes_out: Callable[[Any], int] | None = None,
    outputs: bool = True,
    items_out: Callable[[Any], int] | None = None,
    done: str | None = None,
) -> Callable[[Callable[..., Iterable]], Callable[..., Iterator]]:
    """Meter a DoFn's (generator) `process` under its instance's `self.meter`: its element
    counted in (`inputs`: one per call, `len` of a batch, or None: the stage counts its
    own) with `bytes_in` of it (of each of a batch's items), then its outputs driven through
    StageMeter.drive: timed, main outputs counted out (`items_out` of each: `len` where a
    stage emits its outputs in lists) with their `bytes_out` (unless not `outputs`),
    outputs to errors/ counted as rejected. `done`: a live counter (progress display only) raised
    by one once an element's outputs are all counted: "done" never runs ahead of what it made."""

    def wrap(process: Callable[..., Iterable]) -> Callable[..., Iterator]:
        @functools.wraps(process)
        def run(self: Any, element: Any = None, *args: Any, **kwargs: Any) -> Iterator:
            meter: StageMeter = self.meter
            items = element if inputs == "batch" else [element]
            counted: dict[str, float] = {}
            if inputs:
                counted["elements_in"] = len(items)
            if bytes_in:
                counted["bytes_in"] = sum(bytes_in(x) for x in items)
            if counted:
                meter.add(**counted)
            yield from meter.drive(process(self, element, *args, **kwargs), bytes_out, outputs, items_out=items_out)
            if done:
                meter.live(**{done: 1})

        return run

    return wrap
