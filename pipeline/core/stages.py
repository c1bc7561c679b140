"""The job's stages, named once. A stage is a metrics namespace (`docbeam.<stage>`), a row of
the cost report and the `stage` of an errors/ line; the order here is the report's."""

import enum


class Stage(enum.StrEnum):
    MATCH = "match"
    PARSE = "parse"
    REUSE = "reuse"
    CHUNK = "chunk"
    PACK = "pack"
    ENCODE = "encode"
    ASSEMBLE = "assemble"
    WRITE = "write"
    NER_WINDOWS = "ner_windows"
    NER_PACK = "ner_pack"
    NER_ENCODE = "ner_encode"
    NER_ENTITIES = "ner_entities"
    SINK = "sink"  # --sink: writing the chunks to vector stores, after the Parquet is committed


EXTRACT_PREFIX = "extract_"


def extract_stage(extractor: str) -> str:
    """Each extractor meters its own stage, named after it."""
    return f"{EXTRACT_PREFIX}{extractor}"


def extractor_of(stage: str) -> str | None:
    """The extractor whose stage this is (extract_stage's inverse), or None."""
    return stage[len(EXTRACT_PREFIX) :] if stage.startswith(EXTRACT_PREFIX) else None


# An extractor stage's counter of documents it skips by design, by reason: "skipped: ja: ...".
SKIPPED_PREFIX = "skipped: "


def extraction_skips(stage_totals: dict[str, dict]) -> dict[str, dict[str, int]]:
    """extractor -> {reason: documents} for the documents extractors skipped by design."""
    out: dict[str, dict[str, int]] = {}
    for stage, totals in sorted(stage_totals.items()):
        extractor = extractor_of(stage)
        if extractor:
            reasons = {k[len(SKIPPED_PREFIX) :]: v for k, v in totals.items() if k.startswith(SKIPPED_PREFIX) and v}
            if reasons:
                out[extractor] = dict(sorted(reasons.items()))
    return out
