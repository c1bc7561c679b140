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
