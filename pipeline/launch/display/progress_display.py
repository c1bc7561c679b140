"""Progress a person can read while a job runs in this process.

On a terminal: a live bar (rich) with documents written, the share of the work done (the
encoder's tokens: windows and extraction candidates, counted inside documents) and the document
tokens it stands for, the rate, the ETA and the current stage. Elsewhere (CI, Airflow logs): one
plain line every `interval` seconds. The samples taken on the way are the run's timeline
(throughput and memory over time, for the cost report).
"""

import logging
import sys
import threading
import time

from docbeam.pipeline.core.stages import Stage, extractor_of
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


STAGE_NAMES = {
    "": "starting",
    Stage.MATCH: "listing",
    Stage.PARSE: "reading",
    Stage.REUSE: "reusing",
    Stage.CHUNK: "chunking",
    Stage.PACK: "encoding",
    Stage.ENCODE: "encoding",
    Stage.ASSEMBLE: "assembling",
    Stage.WRITE: "writing",
}


def _stage(snap: dict) -> str:
    if snap["note"]:
        return snap["note"]
    stage = snap["stage"]
    if extractor := extractor_of(stage):
        return f"extracting {extractor}"
    return STAGE_NAMES.get(stage, stage)


def totals(snap: dict, files: int, size: int) -> dict:
    """What the whole input holds, as far as the counters tell: exact once every file is read
    (documents, characters), before that scaled by the share of the input's bytes read; and
    the encoder tokens the whole job needs (its windows and extraction candidates), scaled
    from the text chunked so far by characters, so one long document counts from its first
    windows on. None where nothing tells yet."""
    all_read = snap["files"] >= files
    share = snap["bytes"] / size if size else 0.0
    scale = 1.0 if all_read else (1 / share if share > 0 else None)
    documents = chars = work = document_tokens = None
    if scale is not None:
        documents, chars = snap["documents_read"] * scale, snap["chars_read"] * scale
    if chars and snap["chars_chunked"]:
        per_char = chars / snap["chars_chunked"]
        work = snap["chunk_tokens"] * per_char
        document_tokens = snap["document_tokens"] * per_char
        if snap["chars_started"]:
            work += snap["candidate_tokens"] * chars / snap["chars_started"]
    return {
        "all_read": all_read,
        "documents": documents,
        "work": work,
        "document_tokens": document_tokens,
    }


class Progress:
    """Progress figures from counter snapshots taken in order: totals known so far, rates and
    the ETA. What it reports as done never goes backwards (estimates of the totals may move).

    The ETA is the encoder work left (every window and extraction candidate, in encoder
    tokens) at the encoder's rate since its first batch (its busy-time pace until a second
    sample gives one); once the encoder is done, the documents left to assemble (and extract
    from) at the rate they are written."""

    def __init__(self, files: int, size: int):
        self.files, self.size = files, size
        self.done = {"documents": 0, "document_tokens": 0, "fraction": 0.0}
        self._encode_start: tuple[float, int] | None = None  # (elapsed, encoded tokens) at the first sample with some
        self._write_start: tuple[float, int] | None = None

    def _rate(self, start: tuple[float, int] | None, elapsed: float, count: int) -> float:
        if start is None or elapsed <= start[0] or count <= start[1]:
            return 0.0
        return (count - start[1]) / (elapsed - start[0])

    def update(self, snap: dict, elapsed: float) -> dict:
        t = totals(snap, self.files, self.size)
        encoded, written = snap["encoded_tokens"], snap["documents_written"]
        if encoded and self._encode_start is None:
            self._encode_start = (elapsed, encoded)
        if written and self._write_start is None:
            self._write_start = (elapsed, written)
        work = t["work"]
        fraction = min(encoded / work, 1.0) if work else 0.0
        documents = t["documents"]
        to_write = None if documents is None else max(documents - snap["rejected"], 0)
        finished = t["all_read"] and to_write is not None and written >= to_write and snap["documents_read"] > 0
        if finished:
            fraction = 1.0
        else:
            fraction = min(fraction, 0.99)  # what follows the encoder is not done yet
        doc_tokens = fraction * t["document_tokens"] if t["document_tokens"] else 0
        done = self.done
        done["documents"] = max(done["documents"], written)
        done["document_tokens"] = int(max(done["document_tokens"], doc_tokens, snap["tokens_written"]))
        done["fraction"] = max(done["fraction"], fraction)
        eta: float | None = None
        encode_rate = self._rate(self._encode_start, elapsed, encoded)
        if not encode_rate and encoded and snap.get("encode_seconds"):
            # Until a second sample gives a rate: the encoder's own pace (busy time only, so
            # a hopeful first figure), rather than no ETA for a short job's whole encoding.
            encode_rate = encoded / snap["encode_seconds"]
        if finished:
            eta = 0.0
        elif work and encoded < work * 0.999 and encode_rate > 0:
            eta = (work - encoded) / encode_rate
        elif work and encoded >= work * 0.999 and to_write is not None:
            write_rate = self._rate(self._write_start, elapsed, written)
            eta = (to_write - written) / write_rate if write_rate > 0 else None
        total = "?" if documents is None or not snap["documents_read"] else f"{documents:,.0f}"
        if documents is not None and snap["documents_read"] and not t["all_read"]:
            total = f"~{total}"
        eta_text = _duration(max(eta, 0.0) if eta is not None else None)
        tokens_per_s = done["document_tokens"] / max(elapsed, 1e-9)
        of_tokens = f" of ~{t['document_tokens']:,.0f}" if t["document_tokens"] and not finished else ""
        return {
            "short": f"{done['documents']:,}/{total} docs · {done['fraction']:.0%} · {_si(done['document_tokens'])} "
            f"tokens · {_si(tokens_per_s)} tok/s · ETA {eta_text}",
            "documents": f"{done['documents']:,} of {total} documents written",
            "tokens": f"{done['fraction']:.0%} of the work done "
            f"({done['document_tokens']:,}{of_tokens} document tokens)",
            "rate": f"{done['documents'] / max(elapsed, 1e-9):,.1f} docs/s, {tokens_per_s:,.0f} document tokens/s",
            "eta": eta_text,
            "files": f"{min(snap['files'], self.files)}/{self.files} files",
            "stage": _stage(snap),
            "fraction": done["fraction"],
            "documents_done": done["documents"],
            "document_tokens_done": done["document_tokens"],
            "eta_seconds": eta,
        }


class Display:
    """Show progress from enter to exit; `timeline` holds one sample a second."""

    def __init__(self, files: int, size: int, interval: float = 30.0, live: bool | None = None):
        self.files, self.size, self.interval = files, size, interval
        self.live = sys.stderr.isatty() if live is None else live
        self.timeline: list[dict] = []
        self.progress = Progress(files, size)
        self.lines: list[str] = []  # the plain lines logged, in order
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
        d = self.progress.update(snap, elapsed)
        self.timeline.append(
            {
                "t": round(elapsed, 2),
                "documents": d["documents_done"],
                "tokens": d["document_tokens_done"],
                "rss_bytes": rss_bytes(),
            }
        )
        return d

    def _line(self, d: dict) -> str:
        line = f"progress: {d['documents']}, {d['tokens']}; {d['rate']}; ETA {d['eta']}; {d['files']}; {d['stage']}"
        self.lines.append(line)
        return line

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
