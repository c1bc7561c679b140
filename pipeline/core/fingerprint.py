"""Content fingerprints: what a document's outputs depend on, as one short hash.

A document's fingerprint hashes its text together with the run's settings fingerprint: the
checkpoint's files (weights, tokenizer, architecture, pooling, prompts), dtype, window,
stride, language, with `--language auto` the language detector's name, version and model
(`language_detector`: another detector may give a document other rules), the chunking
version, and every extractor setting (a label file by its content). Two runs agree on a
document's fingerprint exactly when they would compute the same outputs for it, so `--reuse`
copies those outputs instead of encoding it again.

The settings fall in two parts (README, "Incremental runs"): what the vectors depend on (every
setting but the extractions') and what the extractions depend on (EXTRACTION_SETTINGS, on
top of the vectors' settings). A change of the second part alone keeps the vectors.
"""

import hashlib
import json

# The settings only the extractions depend on; every other setting changes the vectors.
EXTRACTION_SETTINGS = ("extractors", "ner")


def settings_hash(settings: dict) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:32]


def document(settings: str, text: str) -> str:
    return hashlib.sha256(f"{settings}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _as_stored(settings: dict) -> dict:
    return json.loads(json.dumps(settings, sort_keys=True, default=str))


def vectors_part(settings: dict) -> dict:
    """The settings the vectors (documents' and chunks' embeddings) depend on."""
    return {k: v for k, v in settings.items() if k not in EXTRACTION_SETTINGS}


def extractions_part(settings: dict) -> dict:
    """The settings only the extractions depend on, one key per extractor ('extractors.labels')."""
    out = {f"extractors.{kind}": s for kind, s in (settings.get("extractors") or {}).items()}
    return {**out, **({"ner": settings["ner"]} if settings.get("ner") is not None else {})}


def changed(previous: dict, current: dict) -> list[str]:
    """The settings that differ between two runs, by name: 'dtype (bfloat16 -> float32)'."""
    out = []
    # Compared as JSON, the form they are stored in: a tuple equals the list read back.
    previous, current = _as_stored(previous), _as_stored(current)
    for key in sorted(set(previous) | set(current)):
        a, b = previous.get(key), current.get(key)
        if a != b and key.startswith("extractors.") and None in (a, b):
            out.append(f"{key} ({'added' if a is None else 'dropped'})")
        elif a != b:
            out.append(f"{key} ({a} -> {b})" if len(str(a)) + len(str(b)) < 80 else key)
    return out


def changed_parts(previous: dict, current: dict) -> tuple[list[str], list[str]]:
    """(vector settings changed, extraction settings changed), each by name."""
    return (
        changed(vectors_part(previous), vectors_part(current)),
        changed(extractions_part(previous), extractions_part(current)),
    )


def extractor_kinds_changed(previous: dict, current: dict) -> list[str]:
    """This run's extractors whose settings differ from the previous run's (or that it did not run)."""
    before, now = _as_stored(previous.get("extractors") or {}), _as_stored(current.get("extractors") or {})
    return [kind for kind in now if before.get(kind) != now[kind]]
