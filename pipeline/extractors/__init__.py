"""Extractors: plug-ins that add rows to extractions/ from the same encoder pass.

Each extractor is one module with one class implementing `base.Extractor`, in REGISTRY
below; its name is in `core.choices.EXTRACTORS` too, so that flags are checked before this
package loads (tests/extractors/test_extractors.py keeps the two the same).
"""

from docbeam.pipeline.extractors.base import SHARED_UID, Extractor, ExtractorError
from docbeam.pipeline.extractors.entities import Entities
from docbeam.pipeline.extractors.keyphrases import Keyphrases
from docbeam.pipeline.extractors.labels import Labels
from docbeam.pipeline.extractors.summary import Summary

# extractor -> the class that implements it, in core.choices.EXTRACTORS' order
REGISTRY: dict[str, type[Extractor]] = {
    "keyphrases": Keyphrases,
    "summary": Summary,
    "labels": Labels,
    "entities": Entities,
}


def build(kinds: list[str], settings: dict[str, dict] | None = None) -> list[Extractor]:
    """Instantiate the requested extractors, `settings[kind]` as keyword arguments.
    Raises ExtractorError (e.g. a label file that does not parse) before the job starts."""
    out = []
    for kind in kinds:
        if kind not in REGISTRY:
            raise ExtractorError(f"unknown extractor {kind!r}; available: {', '.join(REGISTRY)}")
        out.append(REGISTRY[kind](**(settings or {}).get(kind, {})))
    return out


__all__ = ["SHARED_UID", "Extractor", "ExtractorError", "REGISTRY", "build"]
