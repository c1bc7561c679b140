"""Keyphrases: KeyBERT's method, done natively on docbeam's own encoder pass.

Candidates are what KeyBERT's default CountVectorizer yields (lower-cased `\\w\\w+` words,
English stop words removed, n-grams over the remaining words), each embedded as its own
short segment; they are ranked by cosine to the document embedding with Maximal Marginal
Relevance for diversity (KeyBERT's `use_mmr=True`).
Differences from KeyBERT, on purpose:
- an n-gram never crosses a sentence boundary (the shared segmenter, `--language`): "... Macron.
  The company ..." yields no `macron company`;
- the value keeps the document's casing at the phrase's first occurrence (`Emmanuel Macron`),
  whose span it gives; phrases are still told apart case-insensitively, as KeyBERT does;
- by default the document embedding covers the whole text (all windows), not its first 256
  tokens (`--keyphrase-reference first-window` ranks as KeyBERT does);
- a huge document keeps its `max_candidates` most frequent candidates.
"""

import re
from dataclasses import dataclass

import numpy as np

from docbeam.pipeline.core.choices import KEYPHRASE_REFERENCES
from docbeam.pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from docbeam.pipeline.extractors.base import Extractor, candidate_text, row
from docbeam.pipeline.extractors.stopwords import ENGLISH_STOP_WORDS
from docbeam.pipeline.ingest.chunking import encode_short
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE, sentences

WORD = re.compile(r"(?u)\b\w\w+\b")


@dataclass(slots=True)
class Candidate:
    start: int  # span of the first occurrence
    end: int
    value: str  # its words as the document writes them there
    count: int


def candidates(
    text: str, ngrams: tuple[int, int] = (1, 2), stop_words=ENGLISH_STOP_WORDS, language: str = DEFAULT_LANGUAGE
) -> dict[str, Candidate]:
    """lower-cased phrase -> Candidate, phrases in alphabetical order (as CountVectorizer's
    vocabulary), n-grams formed within each sentence only."""
    found: dict[str, Candidate] = {}
    for sent in sentences(text, language):
        words = [m for m in WORD.finditer(text, sent.start, sent.end) if m.group().lower() not in stop_words]
        for n in range(ngrams[0], ngrams[1] + 1):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                phrase = " ".join(w.group().lower() for w in gram)
                if phrase in found:
                    found[phrase].count += 1
                else:
                    found[phrase] = Candidate(gram[0].start(), gram[-1].end(), " ".join(w.group() for w in gram), 1)
    return {p: found[p] for p in sorted(found)}


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


REFERENCE = -1  # the index of the first-window reference segment among a document's candidates
REFERENCE_CHARS = 20_000  # more than any window's worth of text: the tokenizer truncates


class Keyphrases(Extractor):
    name = "keyphrases"
    row_kind = "keyphrase"

    def __init__(
        self,
        ngrams: tuple[int, int] = (1, 2),
        top_n: int = 5,
        diversity: float = 0.5,
        max_candidates: int = 1000,
        reference: str = "document",
        language: str = DEFAULT_LANGUAGE,
    ):
        if not 1 <= ngrams[0] <= ngrams[1]:
            raise ValueError(f"bad n-gram range {ngrams}")
        if top_n < 1:
            raise ValueError(f"keyphrase top-n {top_n}: must be at least 1")
        if reference not in KEYPHRASE_REFERENCES:
            raise ValueError(f"keyphrase reference {reference!r}: choose {' or '.join(KEYPHRASE_REFERENCES)}")
        self.ngrams, self.top_n, self.diversity, self.max_candidates = ngrams, top_n, diversity, max_candidates
        self.reference, self.language = reference, language

    def candidates(self, doc: Document, tokenizer, special, max_seq_len: int) -> list[Segment]:
        found = candidates(doc.text, self.ngrams, language=self.language)
        if len(found) > self.max_candidates:
            keep = sorted(found, key=lambda p: (-found[p].count, p))[: self.max_candidates]
            found = {p: found[p] for p in sorted(keep)}
        phrases = list(found)
        # The lower-cased phrase is what gets embedded, as KeyBERT does; the row shows the value.
        ids = encode_short(phrases, tokenizer, special, max_seq_len) if phrases else []
        reference = []
        if phrases and self.reference == "first-window":
            # KeyBERT embeds the document truncated at the model's window; the first chunk ends
            # at a sentence boundary before it, so it is not the same text.
            (first,) = encode_short([doc.text[:REFERENCE_CHARS]], tokenizer, special, max_seq_len)
            reference = [
                Segment(
                    uid=doc.uid, doc_id=doc.doc_id, kind=self.name, index=REFERENCE, start_char=0, end_char=0, ids=first
                )
            ]
        return reference + [
            Segment(
                uid=doc.uid,
                doc_id=doc.doc_id,
                kind=self.name,
                index=i,
                start_char=found[p].start,
                end_char=found[p].end,
                ids=tok_ids,
                text=found[p].value,
            )
            for i, (p, tok_ids) in enumerate(zip(phrases, ids))
        ]

    def extract(self, info: DocInfo, embedding: np.ndarray, vectors: list[SegmentVector], shared, chunks) -> list[dict]:
        ref = [v.vector for v in vectors if v.index == REFERENCE]
        vectors = sorted((v for v in vectors if v.index != REFERENCE), key=lambda v: v.index)
        if not vectors:
            return []
        mat = np.stack([v.vector for v in vectors]).astype(np.float64)
        # "first-window" ranks against the document truncated at the window, as KeyBERT (via
        # sentence-transformers' truncation) does; "document" against the whole document's embedding.
        doc = (ref[0] if ref else embedding).astype(np.float64)
        picked = mmr(doc, mat, self.top_n, self.diversity)
        scored = sorted(((float(mat[i] @ doc), vectors[i]) for i in picked), key=lambda t: -t[0])
        return [row(info.doc_id, "keyphrase", candidate_text(v), s, v.start_char, v.end_char) for s, v in scored]
