"""HostPooled: a DoFn whose work runs in the worker's host pool (graph.host_pool) when it has one."""

import collections
import hashlib
import pickle
from collections.abc import Iterator
from typing import Any

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindows

from docbeam.pipeline.cost import metering
from docbeam.pipeline.graph import host_pool


class HostPooled(beam.DoFn):
    """A DoFn whose `work(element)` (a generator, metered) runs in the host pool when there is
    one. Subclasses set `self.processes` in __init__ and do their set-up in `setup_work`."""

    processes: int = 1
    IN_FLIGHT = 2  # elements per pool process handed out ahead: the pool never waits for this thread

    def setup(self) -> None:
        n = host_pool.size(self.processes)
        if (host := host_pool.pool(n)) is None:
            self._pool = None
            self.setup_work()
            return
        blob = pickle.dumps(self)  # before any attribute is set: the DoFn as Beam handed it over
        self._pool = host
        self._task = (hashlib.sha256(blob).hexdigest(), blob)
        self._depth = self.IN_FLIGHT * n
        self._futures: collections.deque = collections.deque()

    def setup_work(self) -> None:
        pass

    def work(self, element: Any) -> Iterator:
        raise NotImplementedError

    def process(self, element: Any) -> Iterator:
        if self._pool is None:
            yield from self.work(element)
            return
        self._futures.append(self._pool.submit(host_pool.work, *self._task, element))
        while len(self._futures) > self._depth or (self._futures and self._futures[0].done()):
            yield from self._next()

    def finish_bundle(self) -> Iterator:
        if self._pool is None:
            return
        while self._futures:
            for out in self._next():
                if isinstance(out, beam.pvalue.TaggedOutput):
                    yield beam.pvalue.TaggedOutput(out.tag, GlobalWindows.windowed_value(out.value))
                else:
                    yield GlobalWindows.windowed_value(out)

    def _next(self) -> list:
        outputs, updates = self._futures.popleft().result()
        metering.replay(updates)
        return outputs
