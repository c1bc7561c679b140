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
    """Counters so far, in the user's units, the stage active most recently, and the note."""
    with _lock:
        c = dict(_counts)
        active = max(_last_active, key=lambda stage: _last_active[stage], default="")
        text = _note[0]

    def get(stage: str, name: str) -> float:
        return c.get((stage, name), 0)

    # Beam runs a batch stage by stage: documents are assembled only once every vector of
    # every document is back. The encoder's share of the tokens packed so far says how far the
    # documents chunked so far have gone through it, in documents and document tokens.
    packed = get("pack", "tokens")
    encoded = min(get("encode", "tokens") / packed, 1.0) if packed else 0.0
    written = get(Stage.ASSEMBLE, "elements_out")
    return {
        "files": int(get("parse", "elements_in")),
        "bytes": int(get("parse", "bytes_in")),
        "documents_read": int(get("parse", "elements_out") + get("parse", "rejected")),
        "documents_done": int(max(written, (get("chunk", "elements_in") - get("chunk", "rejected")) * encoded)),
        "documents_written": int(written),
        "rejected": int(sum(v for (_, name), v in c.items() if name == "rejected")),
        "tokens_done": int(max(get(Stage.ASSEMBLE, "tokens"), get(Stage.CHUNK, "tokens") * encoded)),
        "chunked_tokens": int(get("chunk", "tokens")),
        "stage": active,
        "note": text,
    }
