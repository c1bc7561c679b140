"""RunInference ModelHandler around the JAX encoder (Beam's contract for inference)."""

import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from apache_beam.metrics import Metrics
from apache_beam.ml.inference.base import ModelHandler

from docbeam.pipeline.core.records import Segment, SegmentVector
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost.memwatch import MemWatch, device_bytes_in_use, rss_bytes
from docbeam.pipeline.cost.metering import StageMeter
from docbeam.pipeline.encode.packing import PackedBatch
from docbeam.pipeline.encode.runtime import (
    TOKEN_CLASSIFICATION,
    EncoderRuntime,
    EncoderSettings,
    InFlight,
    shared_runtime,
)
from docbeam.pipeline.io import storage

log = logging.getLogger("docbeam.encoder")


class EncoderHandler(ModelHandler[PackedBatch, list, EncoderRuntime]):
    """Input: packed batches (already fixed-shape). Output: one SegmentVector per segment; for a
    token classifier (--ner-model), one (Segment, [n_tokens, labels] probabilities) per segment,
    metered as its own stage.

    Packing happens upstream, so RunInference must not batch again: one packed batch per call.

    One batch is kept in flight: a call starts its batch on the device and returns the vectors
    of the batch before it, so while the device works the host goes on with the next documents
    (parse, chunk, pack) and the device never waits for the host's Python. RunInference returns
    each call's outputs synchronously; the order of outputs does not matter downstream (they
    are grouped by document). The packer ends every bundle with `PackedBatch.flush()`, which
    hands back the last batch: nothing stays in flight past a bundle.
    """

    def __init__(self, settings: EncoderSettings):
        super().__init__()
        self.settings = settings
        classify = settings.task == TOKEN_CLASSIFICATION
        self.stage = Stage.NER_ENCODE if classify else Stage.ENCODE
        self._unpack = _token_scores if classify else _unpack
        self._meter: StageMeter | None = None
        self._watches: dict[str, MemWatch] | None = None
        self._last: list[float] | None = None  # [started, tokens, last line, batches] of the progress lines
        self._in_flight: InFlight | None = None  # the started batch whose vectors the next call returns

    def load_model(self) -> EncoderRuntime:
        _count_storage_retries()
        runtime, loaded = shared_runtime(self.settings)
        if loaded:
            StageMeter(self.stage).add(model_loads=1)
        return runtime

    def run_inference(
        self, batch: Sequence[PackedBatch], model: EncoderRuntime, inference_args: dict[str, Any] | None = None
    ) -> Iterable[list]:
        meter = self._meter = self._meter or StageMeter(self.stage)
        results: list[list] = []
        for b in batch:
            with meter.timed():
                started = None if b.is_flush else model.start(b)
                done, self._in_flight = self._in_flight, started
                if done is not None:
                    results.append(self._finish(model, done, meter))
        return results

    def _finish(self, model: EncoderRuntime, job: InFlight, meter: StageMeter) -> list:
        out, kernel, stats = model.finish(job)
        fed_rows = model.rows_on_devices(job.batch.shape[0])
        return self._record(job.batch, out, kernel, stats, fed_rows, device_bytes_in_use(), meter)

    def _record(
        self, b: PackedBatch, out, kernel: str, stats, fed_rows: int, device_bytes: int | None, meter: StageMeter
    ) -> list:
        vectors = self._unpack(b, out, kernel)
        real = b.real_tokens
        fed = fed_rows * b.shape[1]  # with the empty rows that even out the devices
        meter.add(
            elements_in=len(b.slots),
            elements_out=len(vectors),
            bytes_in=b.tokens.nbytes * 3,
            bytes_out=out.nbytes,
            device_us=stats.device_seconds * 1e6,
            compile_us=stats.compile_seconds * 1e6,
            compilations=stats.compilations,
            fallbacks=stats.fallbacks,
            tokens=real,
            pad_tokens=fed - real,
        )
        self._watch_memory(meter, device_bytes)
        self._progress(stats.batches, real)
        return vectors

    def _watch_memory(self, meter: StageMeter, device_bytes: int | None) -> None:
        if self._watches is None:
            limit = self.settings.leak_threshold_mb << 20
            self._watches = {"rss": MemWatch("encoder host", limit), "device": MemWatch("encoder device", limit)}
        for kind, value in (("rss", rss_bytes()), ("device", device_bytes)):
            if value is None:
                continue
            watch = self._watches[kind]
            if watch.sample(value):
                meter.add(leak_warnings=1)
                meter.gauge(f"{kind}_leak_bytes", watch.growth_when_fired)
            meter.gauge(f"{kind}_bytes", value)
            meter.gauge(f"{kind}_growth_bytes", watch.growth)

    def _progress(self, batches: int, tokens: int) -> None:
        now = time.perf_counter()
        last = self._last = self._last or [now, 0, now, 0]
        last[1] += tokens
        last[3] += batches
        if now - last[2] >= 10:  # a line every 10 s on long runs
            rate = last[1] / max(now - last[0], 1e-9)
            log.info("encoded %d tokens in %d batches (%.0f tokens/s)", last[1], last[3], rate)
            last[2] = now

    def get_num_bytes(self, batch: Sequence[PackedBatch]) -> int:
        return sum(b.tokens.nbytes for b in batch)

    def get_metrics_namespace(self) -> str:
        return f"docbeam.{self.stage}"

    def batch_elements_kwargs(self) -> dict:
        return {"min_batch_size": 1, "max_batch_size": 1}


_RETRY_COUNTER = Metrics.counter("docbeam.encode", "retries")


def _count_retry(operation: str) -> None:
    _RETRY_COUNTER.inc()


def _count_storage_retries() -> None:
    """Count storage retries (checkpoint downloads from gs://) as a Beam metric, once per process."""
    storage.remove_retry_hook(_count_retry)  # a no-op when absent: keeps it registered once
    storage.add_retry_hook(_count_retry)


def _unpack(batch: PackedBatch, vectors: np.ndarray, attention: str) -> list[SegmentVector]:
    return [
        SegmentVector(
            uid=s.uid,
            doc_id=s.doc_id,
            kind=s.kind,
            index=s.index,
            start_char=s.start_char,
            end_char=s.end_char,
            n_tokens=s.n_tokens,
            vector=vectors[row, sid - 1].copy(),
            attention=attention,
            text=s.text,
            cut_in_word=s.cut_in_word,
        )
        for row, sid, s in batch.slots
    ]


def _token_scores(batch: PackedBatch, scores: np.ndarray, attention: str) -> list[tuple[Segment, np.ndarray]]:
    """Each segment with the label probabilities of its own tokens (special tokens included)."""
    out = []
    for row, sid, s in batch.slots:
        at = int(np.flatnonzero(batch.segment_ids[row] == sid)[0])
        out.append((s, scores[row, at : at + s.n_tokens].copy()))
    return out
