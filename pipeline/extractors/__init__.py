"""Extractors: plug-ins that add rows to extractions/ from the same encoder pass.

Each extractor is one module with one class implementing `base.Extractor`; register it in
`REGISTRY` below. Adding one touches its module and one line here.
"""

from pipeline.extractors.base import SHARED_UID, Extractor, ExtractorError

REGISTRY: dict[str, str] = {}


def build(kinds: list[str], labels_file: str | None = None) -> list[Extractor]:
    """Instantiate the requested extractors; raises ExtractorError before the job starts."""
    import importlib

    out = []
    for kind in kinds:
        if kind not in REGISTRY:
            raise ExtractorError(f"unknown extractor {kind!r}; available: {', '.join(REGISTRY) or 'none'}")
        module_name, cls_name = REGISTRY[kind].rsplit(":", 1)
        cls = getattr(importlib.import_module(module_name), cls_name)
        out.append(cls(labels_file=labels_file) if kind == "labels" else cls())
    return out


__all__ = ["SHARED_UID", "Extractor", "ExtractorError", "REGISTRY", "build"]
