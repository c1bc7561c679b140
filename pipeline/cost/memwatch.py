"""Memory drift detection for long-running stages (the leak that cost 40% over budget).

Samples resident memory (and device memory where the platform reports it) once per
batch. After a warm-up (weights loaded, executables compiled) it takes a baseline; if
memory then keeps rising past `threshold_bytes` above it, it warns once, loudly, and the
cost report records it. A one-off step (a new shape compiled) does not fire: most of
the last `window` samples must still be climbing.
"""

import logging
import os
from collections import deque
from dataclasses import dataclass, field

log = logging.getLogger("docbeam.memory")

_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """Current resident set size of this process (not the peak)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def device_bytes_in_use() -> int | None:
    import jax

    stats = jax.local_devices()[0].memory_stats()  # None on CPU
    return int(stats["bytes_in_use"]) if stats and "bytes_in_use" in stats else None


@dataclass
class MemWatch:
    label: str
    threshold_bytes: int = 256 << 20
    warmup: int = 5
    window: int = 8
    recent: deque = field(default_factory=deque)  # the last `window` samples only: bounded
    count: int = 0
    baseline: int | None = None
    fired: bool = False
    growth_when_fired: int = 0  # the figure the warning logged

    def sample(self, value: int) -> bool:
        """Record one sample; True the first time drift is detected."""
        self.count += 1
        self.recent.append(value)
        if len(self.recent) > self.window:
            self.recent.popleft()
        if self.count <= self.warmup:
            return False
        if self.baseline is None:
            self.baseline = value
            return False
        growth = value - self.baseline
        window = list(self.recent)
        rises = sum(b > a for a, b in zip(window, window[1:]))
        # Still climbing: most recent steps go up (a one-off jump, e.g. a new shape compiled, is one step).
        climbing = len(window) == self.window and window[-1] > window[0] and rises >= 0.6 * (self.window - 1)
        if not self.fired and growth > self.threshold_bytes and climbing:
            self.fired, self.growth_when_fired = True, growth
            log.warning(
                "%s memory keeps growing: +%.0f MiB over %d batches since warm-up (threshold %.0f MiB); "
                "a leak here multiplies the bill on every worker",
                self.label,
                growth / 2**20,
                self.count - self.warmup,
                self.threshold_bytes / 2**20,
            )
            return True
        return False

    @property
    def growth(self) -> int:
        return (self.recent[-1] - self.baseline) if self.baseline is not None and self.recent else 0
