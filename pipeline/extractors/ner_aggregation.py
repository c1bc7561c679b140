"""Named entities from a token classifier's label probabilities (--ner-model). Pure: no Beam.

The aggregation is the Hugging Face token-classification pipeline's (transformers 5.x,
`TokenClassificationPipeline.gather_pre_entities`, `aggregate`, `group_entities`), rule for
rule, so docbeam's entities equal the pipeline's on the same text
(tests/extractors/test_ner_parity.py):

- tokens: special tokens are skipped; a token continues the previous word when the tokenizer
  has a continuing-subword prefix (WordPiece's `##`) and the token's string is not as long as
  its text, otherwise (SentencePiece, byte-level BPE) when no space is next to its start;
  the unknown token always starts a word;
- `simple`: each token takes its most probable label; `first` / `average` / `max`: each word
  takes the label of its first token, of its averaged probabilities, or of its most confident
  token;
- grouping: consecutive tokens (words) with the same type join unless the later one is a
  `B-` tag; a group's score is the mean of its members'; groups labelled `O` are dropped.

A document longer than one window is classified window by window; an entity seen by two
overlapping windows is resolved once, with the pipeline's own rule for its strided windows
(`aggregate_overlapping_entities`: of overlapping entities the longer wins, then the more
confident).
"""

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer

from docbeam.model.tokenizer import SpecialTokens
from docbeam.pipeline.core.choices import NER_AGGREGATIONS
from docbeam.pipeline.core.records import Segment

STRATEGIES = NER_AGGREGATIONS
DEFAULT_STRATEGY = "first"
OUTSIDE = "O"


@dataclass(frozen=True)
class Entity:
    label: str  # the entity type, e.g. PER (kind `entity:PER`)
    start: int  # characters [start, end) of the text it was found in
    end: int
    score: float
    text: str  # those characters

    def shifted(self, offset: int) -> "Entity":
        return Entity(self.label, self.start + offset, self.end + offset, self.score, self.text)


@dataclass(frozen=True)
class _Token:
    start: int
    end: int
    scores: np.ndarray  # [labels] probabilities
    subword: bool  # continues the previous token's word


@dataclass(frozen=True)
class _Tagged:
    label: str  # a full tag: B-PER, I-PER, O
    start: int
    end: int
    score: float


class WordRule:
    """What the aggregation needs from a tokenizer: its token strings, whether it marks
    word continuations (the same attribute of the `tokenizers` model the pipeline reads)
    and its unknown token."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        model = tokenizer.model
        self.prefix = getattr(model, "continuing_subword_prefix", None)
        unk = getattr(model, "unk_token", None)  # WordPiece, BPE; a Unigram model keeps an id
        self.unk_id = tokenizer.token_to_id(unk) if unk else json.loads(tokenizer.to_str())["model"].get("unk_id")

    def is_subword(self, text: str, token_id: int, start: int, end: int) -> bool:
        if token_id == self.unk_id:
            return False
        if self.prefix:
            return len(self.tokenizer.id_to_token(token_id) or "") != end - start
        # The pipeline's fallback for tokenizers that do not mark words: only a space counts.
        return start > 0 and " " not in text[start - 1 : start + 1]


def window_entities(
    text: str,
    ids: Sequence[int],
    offsets: Sequence[tuple[int, int]],
    special: Sequence[int],
    scores: np.ndarray,
    labels: Sequence[str],
    rule: WordRule,
    strategy: str = DEFAULT_STRATEGY,
) -> list[Entity]:
    """Entities of one window of `text`: its tokens (ids, character offsets into `text`, the
    special-token mask) and their label probabilities [n_tokens, labels]."""
    tokens = [
        _Token(s, e, scores[i], rule.is_subword(text, tid, s, e))
        for i, (tid, (s, e), sp) in enumerate(zip(ids, offsets, special))
        if not sp
    ]
    if strategy == "simple":
        tagged = [_tag(t.scores, labels, t.start, t.end) for t in tokens]
    elif strategy in STRATEGIES:
        tagged = [_word(w, labels, strategy) for w in _words(tokens)]
    else:
        raise ValueError(f"aggregation {strategy!r}: choose from {', '.join(STRATEGIES)}")
    return [e for e in _group(tagged, text) if e.label != OUTSIDE]


def _tag(scores: np.ndarray, labels: Sequence[str], start: int, end: int) -> _Tagged:
    best = int(scores.argmax())
    return _Tagged(labels[best], start, end, float(scores[best]))


def _words(tokens: list[_Token]) -> Iterable[list[_Token]]:
    word: list[_Token] = []
    for t in tokens:
        if word and not t.subword:
            yield word
            word = []
        word.append(t)
    if word:
        yield word


def _word(word: list[_Token], labels: Sequence[str], strategy: str) -> _Tagged:
    start, end = word[0].start, word[-1].end
    if strategy == "first":
        return _tag(word[0].scores, labels, start, end)
    if strategy == "max":
        return _tag(max(word, key=lambda t: t.scores.max()).scores, labels, start, end)
    return _tag(np.nanmean(np.stack([t.scores for t in word]), axis=0), labels, start, end)


def _split(tag: str) -> tuple[str, str]:
    """(B or I, type); a tag without a B-/I- prefix continues like I-."""
    if tag.startswith(("B-", "I-")):
        return tag[0], tag[2:]
    return "I", tag


def _group(tagged: list[_Tagged], text: str) -> list[Entity]:
    groups: list[list[_Tagged]] = []
    for t in tagged:
        bi, kind = _split(t.label)
        if groups and bi != "B" and kind == _split(groups[-1][-1].label)[1]:
            groups[-1].append(t)
        else:
            groups.append([t])
    # The group's type is its first tag less everything up to the first '-' (the pipeline's rule).
    return [
        Entity(
            g[0].label.split("-", 1)[-1],
            g[0].start,
            g[-1].end,
            float(np.nanmean([t.score for t in g])),
            text[g[0].start : g[-1].end],
        )
        for g in groups
    ]


class WindowReader:
    """A token classifier's windows (pipeline.ingest.ner_windows) and their label probabilities
    -> each window's entities, offsets into its document."""

    def __init__(self, tokenizer: Tokenizer, special: SpecialTokens, labels: Sequence[str], strategy: str):
        self.tokenizer, self.labels, self.strategy = tokenizer, tuple(labels), strategy
        self.cut = (len(special.prefix), len(special.suffix))
        self.rule = WordRule(tokenizer)

    def __call__(self, windows: Sequence[tuple[Segment, np.ndarray]]) -> list[list[Entity]]:
        """`windows`: (window, [n_tokens, labels] probabilities, special tokens included)."""
        texts = [seg.text for seg, _ in windows]
        encodings = self.tokenizer.encode_batch(texts, add_special_tokens=False) if texts else []
        return [self._one(seg, scores, enc) for (seg, scores), enc in zip(windows, encodings)]

    def _one(self, seg: Segment, scores: np.ndarray, enc) -> list[Entity]:
        lead, end = self.cut[0], seg.n_tokens - self.cut[1]
        # Offsets come from tokenising the window's text again: the window carries that text's tokens.
        if seg.text is None or seg.ids[lead:end].tolist() != enc.ids:
            raise ValueError(f"{seg.doc_id} window {seg.index}: its tokens are not its text's")
        found = window_entities(
            seg.text,
            enc.ids,
            enc.offsets,
            enc.special_tokens_mask,
            scores[lead:end],
            self.labels,
            self.rule,
            self.strategy,
        )
        return [e.shifted(seg.start_char) for e in found]


def document_entities(windows: Sequence[list[Entity]]) -> list[Entity]:
    """A document's entities from those of its windows, in window order: one window's as they
    are (the pipeline leaves a single chunk alone), several windows' with overlaps resolved."""
    if len(windows) == 1:
        return list(windows[0])
    return resolve_overlaps(e for found in windows for e in found)


def resolve_overlaps(entities: Iterable[Entity]) -> list[Entity]:
    """One entity per overlap, in text order: of entities that start inside the one kept so
    far, the longer wins, then the more confident (the first seen on a tie)."""
    ordered = sorted(entities, key=lambda e: e.start)  # stable: earlier windows first
    out: list[Entity] = []
    for e in ordered:
        if out and out[-1].start <= e.start < out[-1].end:
            kept = out[-1]
            longer = e.end - e.start > kept.end - kept.start
            if longer or (e.end - e.start == kept.end - kept.start and e.score > kept.score):
                out[-1] = e
        else:
            out.append(e)
    return out
