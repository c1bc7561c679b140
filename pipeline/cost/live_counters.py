"""Live progress of the job running in this process: a mirror of the stage meters' counters.

StageMeter.add feeds it; the launcher's display reads it (for runners that execute in this
process, DirectRunner's default; worker processes keep their own copy, unread). Only counters
and a note, under a lock: a few hundred nanoseconds per update.
"""

import threading
import time
from collections import defaultdict

from docbeam.pipeline.core.stages import Stage

_lock = threading.Lock()
_counts: dict[tuple[str, str], float] = defaultdict(float)
_last_active: dict[str, float] = {}
_note: list[str] = [""]


def record(stage: str, values: dict[str, float]) -> None:
    now = time.monotonic()
    with _lock:
        for name, value in values.items():
            _counts[stage, name] += value
        _last_active[stage] = now


def note(text: str) -> None:
    """What the job is doing that no counter shows (compiling the encoder for a shape)."""
    with _lock:
        _note[0] = text


def reset() -> None:
    with _lock:
        _counts.clear()
        _last_active.clear()
        _note[0] = ""


def snapshot() -> dict:
    """Counters so far, in the user's units, the stage active most recently, and the note.

    Beam runs a batch stage by stage: documents are assembled only once every vector of every
    document is back, and one long document is one element for most of the run. So progress
    is also counted inside documents, as the chunk stage emits their windows (`live_*`
    counters, recorded by ChunkDocuments for this display only): the characters of text
    chunked so far and the encoder tokens they and the extraction candidates need, against
    the encoder tokens done. `describe` in launch.display.progress_display turns these into totals.
    """
    with _lock:
        c = dict(_counts)
        active = max(_last_active, key=lambda stage: _last_active[stage], default="")
        text = _note[0]

    def get(stage: str, name: str) -> float:
        return c.get((stage, name), 0)

    return {
        # files whose documents are all counted: a file started is not yet read (its documents
        # would be missing from a total the display then takes as final)
        "files": int(get(Stage.PARSE, "live_files_read")),
        "bytes": int(get(Stage.PARSE, "bytes_in")),
        "documents_read": int(get(Stage.PARSE, "elements_out") + get(Stage.PARSE, "rejected")),
        "chars_read": int(get(Stage.PARSE, "bytes_out")),  # the parsed documents' text, in characters
        "documents_written": int(get(Stage.ASSEMBLE, "elements_out") + get(Stage.REUSE, "elements_out")),
        "rejected": int(sum(v for (_, name), v in c.items() if name == "rejected")),
        "tokens_written": int(get(Stage.ASSEMBLE, "tokens") + get(Stage.REUSE, "tokens")),
        "chunked_tokens": int(get(Stage.CHUNK, "tokens")),  # document tokens of documents fully chunked
        # Inside documents: text started (its candidates known) and chunked, and the encoder
        # tokens both need; the document tokens counted so far.
        "chars_started": int(get(Stage.CHUNK, "live_chars_started")),
        "chars_chunked": int(get(Stage.CHUNK, "live_chars_chunked")),
        "chunk_tokens": int(get(Stage.CHUNK, "live_chunk_tokens")),
        "candidate_tokens": int(get(Stage.CHUNK, "live_candidate_tokens")),
        "document_tokens": int(get(Stage.CHUNK, "live_document_tokens")),
        "encoded_tokens": int(get(Stage.ENCODE, "tokens")),
        "encode_seconds": get(Stage.ENCODE, "wall_us") / 1e6,
        "stage": active,
        "note": text,
    }
