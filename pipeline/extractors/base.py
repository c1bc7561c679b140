"""The extractor contract.

An extractor may
- add per-document segments to embed (`candidates`): phrases, sentences, ...;
- add run-wide segments embedded once (`shared_segments`): label descriptions;
- add rows straight from the text (`text_rows`): patterns such as entities;
- turn the vectors into rows once the document embedding is known (`extract`).
Segments from all of them ride the same tokenize -> pack -> encode pass as the chunks.
"""

import numpy as np
from tokenizers import Tokenizer

from docbeam.model.tokenizer import SpecialTokens
from docbeam.pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from docbeam.pipeline.extractors.values import readable

SHARED_UID = "__shared__"


class ExtractorError(ValueError):
    """Bad extractor configuration (e.g. a label file that does not parse): fails before the job."""


class Extractor:
    name: str = ""
    # The `kind` of its rows in extractions/ (entities: `entity:<type>`, so `entity` is a prefix).
    row_kind: str = ""
    # Raised when the same settings would now give other rows: part of the settings fingerprint,
    # so `--reuse` recomputes this extractor's rows (and only its) instead of copying stale ones.
    version: int = 1
    # Packages whose data shapes the rows (stop-word lists, CLDR): their versions join the
    # fingerprint too, so an upgrade of the data reruns the extractor like a code change does.
    data_packages: tuple[str, ...] = ()

    def owns(self, kind: str) -> bool:
        """Whether an extractions/ row of this `kind` is one of this extractor's."""
        return kind == self.row_kind or kind.startswith(self.row_kind + ":")

    def skip_reason(self, doc: Document) -> str | None:
        """Why this extractor writes nothing for `doc` by design (e.g. keyphrases of a language
        written without spaces), for the run to count by reason; None when it handles it."""
        return None

    def candidates(
        self, doc: Document, tokenizer: Tokenizer, special: SpecialTokens, max_seq_len: int
    ) -> list[Segment]:
        return []

    def shared_segments(self, tokenizer: Tokenizer, special: SpecialTokens, max_seq_len: int) -> list[Segment]:
        return []

    def text_rows(self, doc: Document) -> list[dict]:
        return []

    def extract(
        self,
        info: DocInfo,
        embedding: np.ndarray,
        vectors: list[SegmentVector],
        shared: list[SegmentVector],
        chunks: list[np.ndarray],
    ) -> list[dict]:
        """Rows for one kept document. `embedding`: the document's; `vectors`: this extractor's
        segments of the document; `shared`: its run-wide segments; `chunks`: chunk vectors in order."""
        return []


def text_only(ex: Extractor) -> bool:
    """An extractor that reads the text alone (no encoder segments, no vectors): it can run on a
    document without the encoder."""
    return all(getattr(type(ex), m) is getattr(Extractor, m) for m in ("candidates", "shared_segments", "extract"))


def candidate_text(v: SegmentVector) -> str:
    """An extraction candidate's text (candidates keep theirs; chunk vectors do not)."""
    if v.text is None:
        raise ValueError(f"segment {v.uid}/{v.kind}/{v.index} carries no text: not an extraction candidate")
    return v.text


def row(doc_id: str, kind: str, value: str, score: float, start: int | None, end: int | None) -> dict:
    """One extractions/ row. Every value is made readable here, the one place (values.py):
    whitespace collapsed, line-end hyphens joined; the span stays the text as found."""
    return {
        "doc_id": doc_id,
        "kind": kind,
        "value": readable(value),
        "score": float(score),
        "start_char": start,
        "end_char": end,
    }
