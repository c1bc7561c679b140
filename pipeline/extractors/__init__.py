"""Extractors: plug-ins that add rows to extractions/ from the same encoder pass.

Each extractor is one module with one class implementing `base.Extractor`, named in
`core.choices.EXTRACTORS` (adding one touches its module and that one line).
"""

from docbeam.pipeline.core.choices import EXTRACTORS as REGISTRY
from docbeam.pipeline.extractors.base import SHARED_UID, Extractor, ExtractorError


def build(kinds: list[str], settings: dict[str, dict] | None = None) -> list[Extractor]:
    """Instantiate the requested extractors, `settings[kind]` as keyword arguments.
    Raises ExtractorError (e.g. a label file that does not parse) before the job starts."""
    import importlib

    out = []
    for kind in kinds:
        if kind not in REGISTRY:
            raise ExtractorError(f"unknown extractor {kind!r}; available: {', '.join(REGISTRY)}")
        module_name, cls_name = REGISTRY[kind].rsplit(":", 1)
        cls = getattr(importlib.import_module(module_name), cls_name)
        out.append(cls(**(settings or {}).get(kind, {})))
    return out


__all__ = ["SHARED_UID", "Extractor", "ExtractorError", "REGISTRY", "build"]
