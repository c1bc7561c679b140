"""Progress a person can read while a job runs in this process.

On a terminal: a live bar (rich) with documents and document tokens done out of what is known
so far, the rate, the ETA and the current stage. Elsewhere (CI, Airflow logs): one plain line
every `interval` seconds. Counts are in the user's units: documents and their tokens, never
encoder segments (which include window overlaps and extraction candidates). The samples taken
on the way are the run's timeline (throughput and memory over time, for the cost report).
"""

import logging
import sys
import threading
import time

from docbeam.pipeline.cost import live_counters
from docbeam.pipeline.cost.memwatch import rss_bytes

log = logging.getLogger("docbeam")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _si(n: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g}{unit}"
    return f"{n:.0f}"


def describe(snap: dict, elapsed: float, files: int, size: int) -> dict:
    """Progress figures from a counter snapshot: totals known so far, rates, ETA."""
    share = snap["bytes"] / size if size else 0.0
    read, done = snap["documents_read"], snap["documents_done"] + snap["rejected"]
    all_read = snap["files"] >= files
    expected = read if all_read else (read / share if share > 0 else None)
    rate = snap["documents_done"] / elapsed if elapsed > 0 else 0.0
    eta = (expected - done) / rate if rate > 0 and expected is not None else None
    if snap["documents_written"] >= snap["documents_done"] > 0:
        eta = 0.0
    stage = snap["note"] or {"": "starting", "match": "listing", "parse": "reading"}.get(snap["stage"], snap["stage"])
    total = f"{'' if all_read else '≥'}{read:,}"
    eta_text = _duration(max(eta, 0.0) if eta is not None else None)
    tokens_per_s = snap["tokens_done"] / max(elapsed, 1e-9)
    return {
        "short": f"{snap['documents_done']:,}/{total} docs · {_si(snap['tokens_done'])} tokens · "
        f"{_si(tokens_per_s)} tok/s · ETA {eta_text}",
        "documents": f"{snap['documents_done']:,} of {total} documents",
        "tokens": f"{snap['tokens_done']:,} document tokens",
        "rate": f"{rate:,.1f} docs/s, {tokens_per_s:,.0f} tokens/s",
        "eta": eta_text,
        "files": f"{min(snap['files'], files)}/{files} files",
        "stage": stage,
        "fraction": min(done / expected, 1.0) if expected else 0.0,
    }


class Display:
    """Show progress from enter to exit; `timeline` holds one sample a second."""

    def __init__(self, files: int, size: int, interval: float = 30.0, live: bool | None = None):
        self.files, self.size, self.interval = files, size, interval
        self.live = sys.stderr.isatty() if live is None else live
        self.timeline: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="docbeam-progress", daemon=True)

    def __enter__(self) -> "Display":
        live_counters.reset()
        self.t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _sample(self) -> dict:
        snap = live_counters.snapshot()
        elapsed = time.monotonic() - self.t0
        self.timeline.append(
            {
                "t": round(elapsed, 2),
                "documents": snap["documents_done"],
                "tokens": snap["tokens_done"],
                "rss_bytes": rss_bytes(),
            }
        )
        return describe(snap, elapsed, self.files, self.size)

    def _line(self, d: dict) -> str:
        return f"progress: {d['documents']}, {d['tokens']}; {d['rate']}; ETA {d['eta']}; {d['files']}; {d['stage']}"

    def _loop(self) -> None:
        if self.live:
            self._live_loop()
            return
        last = -self.interval
        while not self._stop.wait(1.0):
            d = self._sample()
            if time.monotonic() - self.t0 - last >= self.interval:
                last = time.monotonic() - self.t0
                log.info(self._line(d))
        log.info(self._line(self._sample()))

    def _live_loop(self) -> None:
        from rich.console import Console
        from rich.logging import RichHandler
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        console = Console(stderr=True)
        root = logging.getLogger()
        saved = root.handlers[:]
        root.handlers = [RichHandler(console=console, show_path=False)]  # log lines print above the bar
        columns = (
            TextColumn("[bold]{task.description:<10.10}"),  # the stage, cut to fit an 80-column terminal
            BarColumn(bar_width=12),
            TextColumn("{task.fields[short]}"),
            TimeElapsedColumn(),
        )
        try:
            with Progress(*columns, console=console, transient=False) as bar:
                task = bar.add_task("starting", total=1.0, short="")
                while not self._stop.wait(1.0):
                    d = self._sample()
                    bar.update(task, completed=d["fraction"], description=d["stage"], short=d["short"])
                d = self._sample()
                bar.update(task, completed=1.0, description="done", short=d["short"])
        finally:
            root.handlers = saved
