"""Keyphrases: KeyBERT's method, done natively on docbeam's own encoder pass.

A keyphrase is a span of the document: its value is `text[start_char:end_char]` made readable
(values.py: whitespace collapsed, a word hyphenated at a line end whole). Candidates are
KeyBERT's words (CountVectorizer's `\\w\\w+`, compared lower-cased) taken in runs: a run is
words that follow each other on one line with nothing between them but spaces or one joining
character inside a compound (`open-source`, `sys.argv`, `TCP/IP`, `IDLE’s Shell`). A stop
word, a number (`00 EUR`, `März 2025`), any other punctuation, a line break
or a sentence boundary ends a run, except a line-end hyphen inside a word (`SIM‐` then
`PLE_BACKUP_SUFFIX` on the next line is one word);
n-grams are formed inside runs only. So "modifying the License" gives `modifying` and
`License`, never `modifying License`; "default.\\nA Tk" gives no `default Tk`. Line breaks
end runs because the text cannot say which ones only wrap a line and which end a heading or
a list item (HTML blocks, man-page lines), and a value with a line break inside reads badly.
Each candidate is embedded as its own short segment (its words lower-cased and joined by one
space, as KeyBERT embeds them); they are ranked by cosine to the document embedding with
Maximal Marginal Relevance for diversity (KeyBERT's `use_mmr=True`).

Per document, its language (`doc.language`) picks the stop words and the lower-casing
(Turkish I/ı, İ/i). Languages written without spaces (Japanese, Chinese, Thai, ...) need a
word segmenter docbeam does not ship: their documents get no keyphrases, and `skip_reason`
says why, for the run to count and report.

Differences from KeyBERT, on purpose:
- the runs above: KeyBERT's n-grams skip stop words and punctuation and cross sentences, so
  its phrases are often not text of the document (`modifying license`);
- the value is the document's text at the phrase's first occurrence (`Emmanuel Macron`);
  phrases are still told apart case-insensitively, as KeyBERT does;
- by default the document embedding covers the whole text (all windows), not its first 256
  tokens (`--keyphrase-reference first-window` ranks as KeyBERT does);
- a huge document keeps its `max_candidates` most frequent candidates;
- with longer phrases in the n-gram range, single words are embedded only for the
  `max_unigrams` (30) the tokenizer splits most (`worth_encoding`): they were most of the
  candidates' encoder work and seldom picked.
"""

import functools
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from docbeam.pipeline.core.choices import KEYPHRASE_REFERENCES
from docbeam.pipeline.core.records import DocInfo, Document, Segment, SegmentVector
from docbeam.pipeline.extractors.base import Extractor, candidate_text, row
from docbeam.pipeline.extractors.prose import overlaps
from docbeam.pipeline.extractors.stopwords import fold, has_stop_words, stop_words
from docbeam.pipeline.extractors.values import readable
from docbeam.pipeline.ingest.chunking import encode_short
from docbeam.pipeline.ingest.hyphens import BREAK
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE, sentences

WORD = re.compile(r"(?u)\b\w\w+\b")  # CountVectorizer's default token_pattern (KeyBERT's)
# What may stand between two words of one run: spaces and tabs (no line break), one joining
# character of a compound, or an apostrophe and one letter (`IDLE’s Shell`, `don't know`).
_SPACE = r"[^\S\n\r\v\f\x1c-\x1e\x85\u2028\u2029]"
JOIN = re.compile(rf"{_SPACE}+|[-‐‑/.'’]|['’]\w{_SPACE}+")
# Written without spaces between words: no words to run without a segmenter (ISO 639-1).
UNSEGMENTED = frozenset({"ja", "zh", "th", "lo", "km", "my", "bo"})


@dataclass(slots=True)
class Candidate:
    start: int  # span of the first occurrence
    end: int
    value: str  # the document's text there, readable: values.readable(text[start:end])
    count: int


def word_pattern(language: str) -> re.Pattern:
    """English: KeyBERT's `\\w\\w+`, for parity. Others: the same with combining marks as
    word characters, or Hindi `हिन्दी` falls apart at its vowel signs (`\\w` has no marks)."""
    return WORD if language == "en" else _marked_word()


@functools.cache
def _marked_word() -> re.Pattern:
    marks, start = [], None
    # Marks outside these planes are none that stop-word languages use; all 1.1M code points
    # would take a second per process.
    for cp in [*range(0x20000), *range(0xE0100, 0xE01F0), -1]:
        if cp >= 0 and unicodedata.category(chr(cp)).startswith("M"):
            start = cp if start is None else start
            end = cp
        elif start is not None:
            marks.append(f"\\u{start:04x}-\\u{end:04x}" if end < 0x10000 else f"\\U{start:08x}-\\U{end:08x}")
            start = None
    word = rf"[\w{''.join(marks)}]"
    return re.compile(rf"(?<!{word}){word}{{2,}}(?!{word})")


def skip_reason(language: str) -> str | None:
    """Why a document in `language` gets no keyphrases, or None when it gets them."""
    if language in UNSEGMENTED:
        return f"{language}: written without spaces, no word segmenter"
    if not has_stop_words(language):
        return f"{language}: no stop-word list"
    return None


@dataclass(frozen=True, slots=True)
class Word:
    start: int
    end: int
    text: str  # as read: a word broken at a line end made whole (`SIM‐` `PLE_BACKUP_SUFFIX`)


def runs(text: str, start: int, end: int, stop: frozenset[str], language: str) -> Iterator[list[Word]]:
    """The runs of non-stop words in text[start:end] (see the module's docstring). A word
    hyphenated at a line end is one word."""
    run: list[Word] = []
    for w in _words(text, start, end, language):
        # A number ends a run as a stop word does: `00 EUR` (from "101,00 EUR"), `49 341` (a phone
        # number) or `März 2025` are pieces of amounts, phones and dates, not what a text is about.
        if fold(w.text, language) in stop or not any(c.isalpha() for c in w.text):
            if run:
                yield run
            run = []
            continue
        if run and not JOIN.fullmatch(text, run[-1].end, w.start):
            yield run
            run = []
        run.append(w)
    if run:
        yield run


def _words(text: str, start: int, end: int, language: str) -> Iterator[Word]:
    """The words of text[start:end]; two pieces of one word broken by a line-end hyphen are one."""
    held: Word | None = None
    for m in word_pattern(language).finditer(text, start, end):
        if held is not None and BREAK.fullmatch(text, held.end, m.start()):
            whole = readable(text[held.start : m.end()])
            if " " not in whole:  # joined (or kept its hyphen): one word
                held = Word(held.start, m.end(), whole)
                continue
        if held is not None:
            yield held
        held = Word(m.start(), m.end(), m.group())
    if held is not None:
        yield held


def candidates(
    text: str,
    ngrams: tuple[int, int] = (1, 2),
    language: str = DEFAULT_LANGUAGE,
    markup: Sequence[tuple[int, int]] = (),
) -> dict[str, Candidate]:
    """lower-cased phrase (words joined by one space) -> Candidate, phrases in alphabetical
    order (as CountVectorizer's vocabulary), n-grams formed within each run only. A word inside
    `markup` (Markdown's link targets, images: not text a reader reads) ends a run."""
    stop = stop_words(language)
    found: dict[str, Candidate] = {}
    for sent in sentences(text, language):
        for run in _outside(runs(text, sent.start, sent.end, stop, language), markup):
            for n in range(ngrams[0], ngrams[1] + 1):
                for i in range(len(run) - n + 1):
                    gram = run[i : i + n]
                    phrase = " ".join(fold(w.text, language) for w in gram)
                    if phrase in found:
                        found[phrase].count += 1
                    else:
                        a, b = gram[0].start, gram[-1].end
                        found[phrase] = Candidate(a, b, readable(text[a:b]), 1)
    return {p: found[p] for p in sorted(found)}


def _outside(found: Iterator[list[Word]], markup: Sequence[tuple[int, int]]) -> Iterator[list[Word]]:
    """The runs split where a word meets `markup`, those words left out."""
    for run in found:
        part: list[Word] = []
        for w in run:
            if markup and overlaps(markup, w.start, w.end):
                if part:
                    yield part
                part = []
            else:
                part.append(w)
        if part:
            yield part


def mmr(doc: np.ndarray, vectors: np.ndarray, top_n: int, diversity: float) -> list[int]:
    """KeyBERT's Maximal Marginal Relevance, on unit vectors. Indices in selection order.

    Each candidate's highest similarity to those chosen is kept up to date one pick at a time
    (n x top_n products), not read from the full n x n matrix KeyBERT builds: same picks."""
    to_doc = vectors @ doc
    chosen = [int(np.argmax(to_doc))]
    closest = vectors @ vectors[chosen[0]]  # each candidate's highest similarity to the chosen
    free = np.ones(len(vectors), bool)
    free[chosen[0]] = False
    for _ in range(min(top_n - 1, len(vectors) - 1)):
        rest = np.flatnonzero(free)
        score = (1 - diversity) * to_doc[rest] - diversity * closest[rest]
        pick = int(rest[int(np.argmax(score))])
        chosen.append(pick)
        free[pick] = False
        closest = np.maximum(closest, vectors @ vectors[pick])
    return chosen


REFERENCE = -1  # the index of the first-window reference segment among a document's candidates
REFERENCE_CHARS = 20_000  # more than any window's worth of text: the tokenizer truncates


class Keyphrases(Extractor):
    name = "keyphrases"
    row_kind = "keyphrase"
    data_packages = ("stopwordsiso",)
    # 3: with longer phrases in the range, only the `max_unigrams` rarest single words are candidates
    # 4: values readable (whitespace collapsed), words broken at a line end whole
    version = 5  # 5: no words of Markdown link targets, images or reference definitions

    def __init__(
        self,
        ngrams: tuple[int, int] = (1, 2),
        top_n: int = 5,
        diversity: float = 0.5,
        max_candidates: int = 1000,
        reference: str = "document",
        max_unigrams: int = 30,
    ):
        if not 1 <= ngrams[0] <= ngrams[1]:
            raise ValueError(f"bad n-gram range {ngrams}")
        if top_n < 1:
            raise ValueError(f"keyphrase top-n {top_n}: must be at least 1")
        if reference not in KEYPHRASE_REFERENCES:
            raise ValueError(f"keyphrase reference {reference!r}: choose {' or '.join(KEYPHRASE_REFERENCES)}")
        self.ngrams, self.top_n, self.diversity, self.max_candidates = ngrams, top_n, diversity, max_candidates
        self.reference, self.max_unigrams = reference, max_unigrams

    @staticmethod
    def language_of(doc: Document) -> str:
        """The language whose stop words apply: the document's (`--language`, else detected)."""
        return doc.language or DEFAULT_LANGUAGE

    def skip_reason(self, doc: Document) -> str | None:
        """Why `doc` gets no keyphrases (its language is written without spaces, or has no
        stop-word list), or None. The run counts these by reason."""
        return skip_reason(self.language_of(doc))

    def candidates(self, doc: Document, tokenizer, special, max_seq_len: int) -> list[Segment]:
        language = self.language_of(doc)
        if skip_reason(language):
            return []
        found = candidates(doc.text, self.ngrams, language, doc.provenance.markup if doc.provenance else ())
        if len(found) > self.max_candidates:
            keep = sorted(found, key=lambda p: (-found[p].count, p))[: self.max_candidates]
            found = {p: found[p] for p in sorted(keep)}
        phrases = list(found)
        # The lower-cased phrase is what gets embedded, as KeyBERT does; the row shows the value.
        ids = encode_short(phrases, tokenizer, special, max_seq_len) if phrases else []
        if self.ngrams[0] == 1 < self.ngrams[1]:
            encode = self.worth_encoding({p: len(i) for p, i in zip(phrases, ids)})
            phrases, ids = [p for p in phrases if p in encode], [i for p, i in zip(phrases, ids) if p in encode]
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

    def worth_encoding(self, n_tokens: dict[str, int]) -> set[str]:
        """Of the candidates (phrase -> its tokens), those that ride the encoder pass: every
        longer phrase, and the `max_unigrams` single words the tokenizer splits into the most
        pieces (then the longest, then alphabetical).

        Single words are most of the candidates and the least often picked: with diversity
        0.5, KeyBERT's top 5 are mostly two-word phrases, and the single words it does pick
        are specific ones, which a subword vocabulary (built from frequent text) splits more.
        The ranking needs no embedding, so the others are never encoded (docs/extractions.md)."""
        words = sorted((p for p in n_tokens if " " not in p), key=lambda p: (-n_tokens[p], -len(p), p))
        return {p for p in n_tokens if " " in p} | set(words[: self.max_unigrams])

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
