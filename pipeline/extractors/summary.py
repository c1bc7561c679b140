"""Extractive summary: the document's most central sentences, in document order.

Centrality is the cosine of a sentence's embedding to the document embedding. Sentences are
split on end punctuation followed by a capital, digit or quote, and on line breaks.
"""

import re

import numpy as np

from pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from pipeline.extractors.base import Extractor, row
from pipeline.ingest.chunking import encode_short

BOUNDARY = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[“‘]?[A-Z0-9])|\n+")


def sentences(text: str, min_words: int = 3) -> list[tuple[int, int]]:
    """(start, end) character spans of the sentences, whitespace trimmed."""
    spans, start = [], 0
    for m in BOUNDARY.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for s, e in spans:
        piece = text[s:e]
        s += len(piece) - len(piece.lstrip())
        e -= len(piece) - len(piece.rstrip())
        if len(text[s:e].split()) >= min_words:
            out.append((s, e))
    return out


class Summary(Extractor):
    name = "summary"

    def __init__(self, top_k: int = 3, max_sentences: int = 512):
        self.top_k, self.max_sentences = top_k, max_sentences

    def candidates(self, doc: Document, tokenizer, special, max_seq_len: int) -> list[Segment]:
        spans = sentences(doc.text)[: self.max_sentences]
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
            row(info.doc_id, "summary", vectors[i].text, scores[i], vectors[i].start_char, vectors[i].end_char)
            for i in chosen
        ]
