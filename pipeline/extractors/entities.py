"""Entities: `entity:<type>` rows (url, email, date, money, phone) from deterministic patterns.

The patterns (patterns.py) read the text alone, so they add rows in `text_rows` without any
encoder work. Entities from a token-classification model (people, organisations, places) are
meant to be one more source of `entity:<type>` rows here, riding the encoder pass through
`candidates`/`extract` like the other extractors.
"""

from docbeam.pipeline.core.records import Document
from docbeam.pipeline.extractors.base import Extractor, row
from docbeam.pipeline.extractors.patterns import find_entities
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE


class Entities(Extractor):
    name = "entities"
    row_kind = "entity"
    data_packages = ("babel",)
    version = 3  # 3: no day from a version number, no closing bracket ending a URL, values readable

    def text_rows(self, doc: Document) -> list[dict]:
        found = find_entities(doc.text, doc.language or DEFAULT_LANGUAGE)  # dates and money in its language
        return [row(doc.doc_id, f"entity:{kind}", value, 1.0, s, e) for kind, value, s, e in found]
