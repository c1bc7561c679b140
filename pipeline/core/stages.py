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


def extract_stage(extractor: str) -> str:
    """Each extractor meters its own stage, named after it."""
    return f"extract_{extractor}"


# An extractor stage's counter of documents it skips by design, by reason: "skipped: ja: ...".
SKIPPED_PREFIX = "skipped: "


def extraction_skips(stage_totals: dict[str, dict]) -> dict[str, dict[str, int]]:
    """extractor -> {reason: documents} for the documents extractors skipped by design."""
    out: dict[str, dict[str, int]] = {}
    for stage, totals in sorted(stage_totals.items()):
        if stage.startswith("extract_"):
            reasons = {k[len(SKIPPED_PREFIX) :]: v for k, v in totals.items() if k.startswith(SKIPPED_PREFIX) and v}
            if reasons:
                out[stage[len("extract_") :]] = dict(sorted(reasons.items()))
    return out
