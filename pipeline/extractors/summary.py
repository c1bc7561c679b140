"""Extractive summary: the document's most central sentences, in document order.

Centrality is the cosine of a sentence's embedding to the document embedding. Sentences come
from the shared segmenter (abbreviations such as "Dr." and hard-wrapped lines are not
boundaries), over the document's prose only: code, prompts, tracebacks and headings are never
candidates (prose.py), and a candidate must read as a sentence (reads_as_sentence).
"""

import re

import numpy as np

from docbeam.pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from docbeam.pipeline.extractors.base import Extractor, candidate_text, row
from docbeam.pipeline.extractors.prose import overlaps, prose_sentences
from docbeam.pipeline.ingest.chunking import encode_short
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE

MIN_WORDS = 3  # shorter "sentences" (labels, "See below.") do not summarise anything
MIN_UNPUNCTUATED_WORDS = 8  # a single line this long without a full stop is still a statement
MIN_LETTER_SHARE = 2 / 3  # of the non-space characters: prose is words, specifications are codes
# Scripts written without spaces between words (Chinese, Japanese kana and kanji, Thai): there a
# word is counted as two characters, about the length of a Japanese or Chinese word.
UNSPACED = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
SPEC_START = set("%-+^_~|*#=<>{}\\")  # format codes, options, markup, operators
# Ends as a sentence: a full stop, question or exclamation mark (Latin, CJK, Arabic, Devanagari),
# or an ellipsis, then any closing quotes and brackets.
SENTENCE_END = re.compile(r"[.!?…。！？؟।][\"'”’»」』)\]]*$")


def word_count(sentence: str) -> int:
    """Words of `sentence`: whitespace-separated, and in unspaced scripts two characters each."""
    unspaced = len(UNSPACED.findall(sentence))
    spaced = len(UNSPACED.sub(" ", sentence).split())
    return spaced + max(unspaced // 2, 1 if unspaced else 0)


def reads_as_sentence(sentence: str, lower_case: bool = False) -> bool:
    """A summary is read as sentences, so a candidate must be one, not a heading, a table of
    contents entry, a label or a format specification (the `date` man page's `%D     date; same
    as %m/%d/%y`). A sentence of prose:
    - ends with sentence punctuation, or is one line of MIN_UNPUNCTUATED_WORDS words or more
      starting with a capital (a heading, label or contents entry is shorter, an option's
      description starts in lower case, and several unpunctuated lines are a list);
    - does not start with a format code, an option, markup or an operator (`%c`, `-d`, `+`, `{`),
      nor with a token without letters or digits: those start specifications, not sentences;
    - does not start in lower case (in scripts with case): a man page's option descriptions
      (`output date/time in ISO 8601 format.`) and fragments of a mis-split sentence do; unless
      `lower_case`, for a text that writes all its sentences so (a chat message);
    - is mostly letters (MIN_LETTER_SHARE of its non-space characters), as words are."""
    words, n_words = sentence.split(), word_count(sentence)
    if n_words < MIN_WORDS:
        return False
    unpunctuated_statement = "\n" not in sentence and n_words >= MIN_UNPUNCTUATED_WORDS and sentence[0].isupper()
    if not SENTENCE_END.search(sentence) and not unpunctuated_statement:
        return False
    if sentence[0] in SPEC_START or not any(c.isalnum() for c in words[0]):
        return False
    if sentence[0].islower() and not lower_case:
        return False
    chars = "".join(words)
    return sum(c.isalpha() for c in chars) >= MIN_LETTER_SHARE * len(chars)


def summary_spans(doc: Document, language: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of the document that may summarise it, in order: its prose
    sentences (headings, the document's sections among them, are boundaries, not text) that
    read as sentences."""
    headings = doc.provenance.sections if doc.provenance else ()
    code = doc.provenance.code if doc.provenance else ()  # Markdown's code blocks
    markup = doc.provenance.markup if doc.provenance else ()  # Markdown's link targets, images
    spans = [(s, e) for s, e in prose_sentences(doc.text, language, headings, code) if not overlaps(markup, s, e)]
    return [(s, e) for s, e in spans if reads_as_sentence(doc.text[s:e])] or [
        (s, e) for s, e in spans if reads_as_sentence(doc.text[s:e], lower_case=True)
    ]


class Summary(Extractor):
    name = "summary"
    row_kind = "summary"
    # 2: prose only: no headings, contents or format lines; the document's language
    # 3: no navigation, usage, synopsis or C declaration lines, nor Markdown code blocks
    # 4: no sentence holding Markdown link targets, images or reference definitions
    version = 4

    def __init__(self, top_k: int = 3, max_sentences: int = 512):
        self.top_k, self.max_sentences = top_k, max_sentences

    def candidates(self, doc: Document, tokenizer, special, max_seq_len: int) -> list[Segment]:
        # the document's own sentence rules (Document.language: --language, else detected)
        spans = summary_spans(doc, doc.language or DEFAULT_LANGUAGE)[: self.max_sentences]
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
