"""Content fingerprints: what a document's outputs depend on, as one short hash.

A document's fingerprint hashes its text together with the run's settings fingerprint: the
checkpoint's files (weights, tokenizer, architecture, pooling, prompts), dtype, window,
stride, language, the chunking version, and every extractor setting (a label file by its
content). Two runs agree on a document's fingerprint exactly when they would compute the
same outputs for it, so `--reuse` copies those outputs instead of encoding it again.
"""

import hashlib
import json


def settings_hash(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:32]


def document(settings: str, text: str) -> str:
    return hashlib.sha256(f"{settings}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _as_stored(settings: dict) -> dict:
    return json.loads(json.dumps(settings, sort_keys=True, default=str))


def changed(previous: dict, current: dict) -> list[str]:
    """The settings that differ between two runs, by name: 'dtype (bfloat16 -> float32)'."""
    out = []
    # Compared as JSON, the form they are stored in: a tuple equals the list read back.
    previous, current = _as_stored(previous), _as_stored(current)
    for key in sorted(set(previous) | set(current)):
        a, b = previous.get(key), current.get(key)
        if a != b:
            out.append(f"{key} ({a} -> {b})" if len(str(a)) + len(str(b)) < 80 else key)
    return out
