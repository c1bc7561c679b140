"""Keyphrases: KeyBERT's method, done natively on docbeam's own encoder pass.

Candidates are what KeyBERT's default CountVectorizer yields (lower-cased `\\w\\w+` words,
English stop words removed, n-grams over the remaining words), each embedded as its own
short segment; they are ranked by cosine to the document embedding with Maximal Marginal
Relevance for diversity (KeyBERT's `use_mmr=True`). The span is the first occurrence.
Differences from KeyBERT, on purpose: by default the document embedding covers the whole
text (all windows), not its first 256 tokens (`--keyphrase-reference first-window` ranks as
KeyBERT does); a huge document keeps its `max_candidates` most frequent candidates.
"""

import re

import numpy as np

from pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from pipeline.extractors.base import Extractor, row
from pipeline.extractors.stopwords import ENGLISH_STOP_WORDS
from pipeline.ingest.chunking import encode_short

WORD = re.compile(r"(?u)\b\w\w+\b")


def candidates(text: str, ngrams: tuple[int, int] = (1, 2), stop_words=ENGLISH_STOP_WORDS) -> dict[str, tuple]:
    """phrase -> (start_char, end_char, count), phrases in alphabetical order."""
    words = [(m.group().lower(), m.start(), m.end()) for m in WORD.finditer(text)]
    words = [w for w in words if w[0] not in stop_words]
    found: dict[str, list] = {}
    for n in range(ngrams[0], ngrams[1] + 1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(w[0] for w in words[i : i + n])
            if phrase in found:
                found[phrase][2] += 1
            else:
                found[phrase] = [words[i][1], words[i + n - 1][2], 1]
    return {p: tuple(found[p]) for p in sorted(found)}


def mmr(doc: np.ndarray, vectors: np.ndarray, top_n: int, diversity: float) -> list[int]:
    """KeyBERT's Maximal Marginal Relevance, on unit vectors. Indices in selection order."""
    to_doc = vectors @ doc
    pairwise = vectors @ vectors.T
    chosen = [int(np.argmax(to_doc))]
    rest = [i for i in range(len(vectors)) if i != chosen[0]]
    for _ in range(min(top_n - 1, len(vectors) - 1)):
        score = (1 - diversity) * to_doc[rest] - diversity * pairwise[np.ix_(rest, chosen)].max(axis=1)
        pick = rest[int(np.argmax(score))]
        chosen.append(pick)
        rest.remove(pick)
    return chosen


class Keyphrases(Extractor):
    name = "keyphrases"

    def __init__(
        self,
        ngrams: tuple[int, int] = (1, 2),
        top_n: int = 5,
        diversity: float = 0.5,
        max_candidates: int = 1000,
        reference: str = "document",
    ):
        if not 1 <= ngrams[0] <= ngrams[1]:
            raise ValueError(f"bad n-gram range {ngrams}")
        if reference not in ("document", "first-window"):
            raise ValueError(f"keyphrase reference {reference!r}: choose document or first-window")
        self.ngrams, self.top_n, self.diversity, self.max_candidates = ngrams, top_n, diversity, max_candidates
        self.reference = reference

    def candidates(self, doc: Document, tokenizer, special, max_seq_len: int) -> list[Segment]:
        found = candidates(doc.text, self.ngrams)
        if len(found) > self.max_candidates:
            keep = sorted(found, key=lambda p: (-found[p][2], p))[: self.max_candidates]
            found = {p: found[p] for p in sorted(keep)}
        phrases = list(found)
        ids = encode_short(phrases, tokenizer, special, max_seq_len) if phrases else []
        return [
            Segment(
                uid=doc.uid,
                doc_id=doc.doc_id,
                kind=self.name,
                index=i,
                start_char=found[p][0],
                end_char=found[p][1],
                ids=tok_ids,
                text=p,
            )
            for i, (p, tok_ids) in enumerate(zip(phrases, ids))
        ]

    def extract(self, info: DocInfo, embedding: np.ndarray, vectors: list[SegmentVector], shared, chunks) -> list[dict]:
        if not vectors:
            return []
        vectors = sorted(vectors, key=lambda v: v.index)
        mat = np.stack([v.vector for v in vectors]).astype(np.float64)
        # "first-window" ranks against the first 256 tokens, as KeyBERT (via sentence-transformers'
        # truncation) does; "document" against the whole document's embedding.
        doc = (chunks[0] if self.reference == "first-window" else embedding).astype(np.float64)
        picked = mmr(doc, mat, self.top_n, self.diversity)
        scored = sorted(((float(mat[i] @ doc), vectors[i]) for i in picked), key=lambda t: -t[0])
        return [row(info.doc_id, "keyphrase", v.text, s, v.start_char, v.end_char) for s, v in scored]
