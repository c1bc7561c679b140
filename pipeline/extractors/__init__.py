"""Extractors: plug-ins that add rows to extractions/ from the same encoder pass.

Each extractor is one module with one class implementing `base.Extractor`; register it in
`REGISTRY` below. Adding one touches its module and one line here.
"""

from docbeam.pipeline.extractors.base import SHARED_UID, Extractor, ExtractorError

REGISTRY: dict[str, str] = {
    "keyphrases": "docbeam.pipeline.extractors.keyphrases:Keyphrases",
    "summary": "docbeam.pipeline.extractors.summary:Summary",
    "labels": "docbeam.pipeline.extractors.labels:Labels",
    "entities": "docbeam.pipeline.extractors.entities:Entities",
}


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
