"""`--sink`: after the run's Parquet is committed, make each store hold exactly its chunks.

Per store, in order:
  1. (at launch, `check`) the store answers and its collection fits this run's vectors, or
     the run is refused before it starts (exit 2); a collection that is absent is created.
  2. every chunk of chunks/ is upserted by a Beam job through ml.rag's write transform
     (graph.store_write), under the retry policy: the whole job is retried, which upserts
     are safe to repeat. A file-based local store (Milvus Lite, Qdrant local) takes one
     writer process: its job always runs on the in-process runner with one worker.
  3. the chunks the store holds for the run's documents, the documents removed since the
     --reuse run (removed/) and those rejected now, that are not in chunks/ are deleted
     through the store's client (a removed document, surplus chunks of a document that now has
     fewer).
  4. the store is read back: every chunk of chunks/ must be there (the sink's accounting);
     the ids of those that are not go to _sink_errors/<scheme>-<hash>.jsonl and fail the run.

Every chunk is upserted on every run, reused or not: a store named for the first time gets
them all, and a reused document whose metadata, pages or sections changed is rewritten.
"""

import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.sink_uri import SinkUri, parse, redact, redact_text
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.core.vector_format import VectorFormat
from docbeam.pipeline.io import outputs, storage
from docbeam.pipeline.launch.running.execute import execute_store_write
from docbeam.pipeline.stores import store_for
from docbeam.pipeline.stores.base import StoreError, chunk_id

log = logging.getLogger("docbeam")
T = TypeVar("T")
LOCAL_WRITER = ["--direct_running_mode=in_memory", "--direct_num_workers=1"]


def check(uris: list[str], dim: "int | VectorFormat") -> list[bool]:
    """Step 1 for every --sink: one line (exit 2) naming the store when it cannot take this run.
    Returns, per store, whether its collection was created now."""
    created = []
    seen: dict[tuple, str] = {}
    for uri in uris:
        sink = parse(uri)
        key = (sink.scheme, sink.path, sink.host, sink.port, sink.collection)
        if key in seen:
            raise UsageError(f"--sink {sink.redacted}: the same store as --sink {seen[key]}")
        seen[key] = sink.redacted
        try:
            created.append(store_for(sink, dim if isinstance(dim, VectorFormat) else None).ensure(dim))
        except StoreError as exc:
            raise UsageError(f"--sink {sink.redacted}: {redact_text(str(exc), [uri])}") from None
        except ImportError as exc:  # the store's client is an extra
            raise UsageError(f"--sink {sink.redacted}: needs {exc.name} (pip install 'docbeam[sinks]')") from None
        except Exception as exc:  # the store's client: unreachable, refused, a file it cannot open
            raise UsageError(
                f"--sink {sink.redacted}: {(redact_text(str(exc), [uri]).splitlines() or [type(exc).__name__])[0]}"
            ) from None
    return created


def _error_line(exc: BaseException, uri: str) -> str:
    """The last line of a client's error, with the sink's URI and secrets redacted."""
    lines = redact_text(f"{type(exc).__name__}: {exc}", [uri]).strip().splitlines()
    return (lines[-1] if lines else type(exc).__name__)[:500]


def error_file(output: str, sink: SinkUri) -> str:
    name = hashlib.sha256(sink.redacted.encode()).hexdigest()[:16]
    return tables.join(output, tables.SINK_ERRORS, f"{sink.scheme}-{name}.jsonl")


def _retrying(fn: Callable[[], T], retries: list[int], uri: str) -> T:
    """`fn` under the run's retry policy (storage's: bounded exponential backoff with jitter);
    each retry is appended to `retries` and logged (redacted: a client's error may quote the
    sink `uri` or its secrets). A StoreError (a collection of another shape) is not retried."""
    policy = storage.retry_policy()

    def note(state: tenacity.RetryCallState) -> None:
        retries.append(1)
        exc = state.outcome.exception() if state.outcome else None
        shown = _error_line(exc, uri) if exc else None
        log.warning("sink %s: attempt %d failed, retrying: %s", redact(uri), state.attempt_number, shown)

    retryer = tenacity.Retrying(
        retry=tenacity.retry_if_not_exception_type(StoreError),
        stop=tenacity.stop_after_attempt(policy.max_attempts),
        wait=tenacity.wait_exponential_jitter(
            initial=policy.initial_wait_s, max=policy.max_wait_s, jitter=policy.initial_wait_s
        ),
        before_sleep=note,
        reraise=True,
    )
    return retryer(fn)


@dataclass(frozen=True)
class RunChunks:
    """What every store of a run is made to hold, read once from the committed output."""

    output: str
    chunk_files: list[str]  # chunks/*.parquet
    doc_files: list[str]  # documents/*.parquet (each chunk's document metadata)
    expected: dict[str, tuple[str, int]]  # chunk id -> (doc_id, chunk_index) of every chunk in chunks/
    docs: set[str]  # documents whose stored chunks are reconciled: written, removed since --reuse, rejected


def write_all(
    uris: list[str],
    output: str,
    dim: "int | VectorFormat",
    options: PipelineOptions,
    store_text: bool,
    removed: list[str],
) -> tuple[list[dict], dict]:
    """Steps 2-4 for every --sink; returns a record per store (for the manifest) and the sink
    stage's metrics (its wall time is the stores' write time, for the cost report)."""
    storage.delete_folder(tables.join(output, tables.SINK_ERRORS))  # an earlier attempt's, if any
    table = outputs.read_table(output, tables.CHUNKS, ["doc_id", "chunk_index"])
    rows = list(zip(table.column("doc_id").to_pylist(), table.column("chunk_index").to_pylist())) if table else []
    expected = {chunk_id(d, i): (d, i) for d, i in rows}
    rejected = {e["doc_id"] for e in outputs.read_errors(output) if e.get("doc_id")}
    run = RunChunks(
        output=output,
        chunk_files=outputs.files(output, tables.CHUNKS, ".parquet"),
        doc_files=outputs.files(output, tables.DOCUMENTS, ".parquet"),
        expected=expected,
        docs={d for d, _ in rows} | set(removed) | rejected,
    )
    records: list[dict] = []
    totals: dict[str, float] = {}
    for uri in uris:
        record, metrics = _write_one(uri, run, dim, options, store_text)
        records.append(record)
        for name, value in metrics.items():
            totals[name] = totals.get(name, 0) + value
    return records, totals


def _write_one(
    uri: str, run: RunChunks, dim: "int | VectorFormat", options: PipelineOptions, store_text: bool
) -> tuple[dict, dict]:
    expected = run.expected
    sink = parse(uri)
    store = store_for(sink, dim if isinstance(dim, VectorFormat) else None)
    retries: list[int] = []
    t0 = time.perf_counter()
    error = None
    metrics: dict = {}
    job_options = PipelineOptions(LOCAL_WRITER) if sink.local else options
    try:
        metrics, _ = _retrying(
            lambda: execute_store_write(
                run.chunk_files, run.doc_files, store.write_config(dim), store_text, job_options, store.fit
            ),
            retries,
            uri,
        )
    except Exception as exc:
        error = _error_line(exc, uri)
        log.error("sink %s: the write failed after %d attempt(s): %s", sink.redacted, len(retries) + 1, error)
    metrics = dict(metrics.get(Stage.SINK, {}))
    truncated = int(metrics.pop("truncated", 0))  # chunks cut to the store's field limits
    stored: dict[str, str] = {}
    deleted, reconciled = 0, False
    try:
        stored = _retrying(lambda: store.ids_of(run.docs), retries, uri)
        stale = sorted(set(stored) - set(expected))
        deleted = _retrying(lambda: store.delete(stale), retries, uri) if stale else 0
        stored = {k: v for k, v in stored.items() if k in expected}
        _retrying(store.after_write, retries, uri)
        reconciled = True
    except Exception as exc:  # the store may still hold chunks Parquet no longer has
        error = error or _error_line(exc, uri)
        log.error("sink %s: reading back or deleting failed: %s", sink.redacted, error)
    missing = sorted(set(expected) - set(stored))
    wall = time.perf_counter() - t0
    metrics.update(wall_us=wall * 1e6, retries=len(retries), elements_out=len(expected) - len(missing))
    record = {
        "uri": sink.redacted,
        "chunks": len(expected),
        "written": len(expected) - len(missing),
        "deleted": deleted,
        "failed": len(missing),
        "truncated": truncated,
        "retries": len(retries),
        "seconds": round(wall, 3),
        "holds": not missing and reconciled,
    }
    if not record["holds"]:
        path = error_file(run.output, sink)
        lines = "".join(
            json.dumps(
                {
                    "sink": sink.redacted,
                    "chunk_id": c,
                    "doc_id": expected[c][0],
                    "chunk_index": expected[c][1],
                    "error": error or "not in the store after the write",
                }
            )
            + "\n"
            for c in missing
        )
        storage.write_text(path, lines)
        record.update(error=error or "chunks missing from the store after the write", error_file=path)
    log.info(
        "sink %s: %d chunk(s) written, %d deleted, %d failed in %.1fs",
        sink.redacted,
        record["written"],
        deleted,
        len(missing),
        wall,
    )
    return record, metrics
