"""Extractive summary: the document's most central sentences, in document order.

Centrality is the cosine of a sentence's embedding to the document embedding. Sentences come
from the shared segmenter (abbreviations such as "Dr." and hard-wrapped lines are not
boundaries), over the document's prose only: code, prompts and tracebacks are never
candidates (prose.py).
"""

import numpy as np

from docbeam.pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from docbeam.pipeline.extractors.base import Extractor, candidate_text, row
from docbeam.pipeline.extractors.prose import prose_sentences
from docbeam.pipeline.ingest.chunking import encode_short
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE

MIN_WORDS = 3  # shorter "sentences" (labels, "See below.") do not summarise anything


class Summary(Extractor):
    name = "summary"
    row_kind = "summary"

    def __init__(self, top_k: int = 3, max_sentences: int = 512, language: str = DEFAULT_LANGUAGE):
        self.top_k, self.max_sentences, self.language = top_k, max_sentences, language

    def candidates(self, doc: Document, tokenizer, special, max_seq_len: int) -> list[Segment]:
        spans = [(s, e) for s, e in prose_sentences(doc.text, self.language) if len(doc.text[s:e].split()) >= MIN_WORDS]
        spans = spans[: self.max_sentences]
        texts = [doc.text[s:e] for s, e in spans]
        ids = encode_short(texts, tokenizer, special, max_seq_len) if texts else []
        return [
            Segment(uid=doc.uid, doc_id=doc.doc_id, kind=self.name, index=i, start_char=s, end_char=e, ids=tok, text=t)
            for i, ((s, e), t, tok) in enumerate(zip(spans, texts, ids))
        ]

    def extract(self, info: DocInfo, embedding: np.ndarray, vectors: list[SegmentVector], shared, chunks) -> list[dict]:
        if not vectors:
            return []
        scores = [float(v.vector.astype(np.float64) @ embedding) for v in vectors]
        best = sorted(range(len(vectors)), key=lambda i: -scores[i])[: self.top_k]
        chosen = sorted(best, key=lambda i: vectors[i].start_char)
        return [
            row(
                info.doc_id,
                "summary",
                candidate_text(vectors[i]),
                scores[i],
                vectors[i].start_char,
                vectors[i].end_char,
            )
            for i in chosen
        ]
