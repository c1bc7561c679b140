"""Document -> token windows that are retrieval units, with character offsets. Pure: no Beam.

A window never starts or ends inside a word, and ends where a reader would stop:

- its end, best first: a paragraph end, then a sentence end, within the last `slack` of the
  window; else the last whitespace boundary in it; else the last of the tokenizer's own word
  boundaries (punctuation, CJK characters); else the window is cut after its last token and
  flagged `cut_in_word` (a single word longer than a window, a script without spaces);
- the next window starts about `stride` tokens before that end, at the first sentence start in
  the overlap, else the first word start: consecutive windows overlap by at most `stride`
  tokens (a target now, not an exact count), nothing falls between them, and together they
  cover the whole text.

A chunk's tokens are exactly the tokens of its text (the contract: the stored vector is the
vector of the chunk's text). Slicing the document's tokens gives them when the tokenizer is
WordPiece behind BERT's pre-tokenizer and the cut is at one of its word boundaries; otherwise
the chunk's text is tokenised itself. Long texts are tokenised in blocks cut at whitespace
(preferably between paragraphs), which the pre-tokenizer treats as a boundary anyway, so
memory stays bounded and the tokens are those of the whole text.
"""

import functools
import itertools
import json
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from tokenizers import Encoding, Tokenizer

from docbeam.model.checkpoint import Checkpoint
from docbeam.model.prompts import PromptTokens, prompt_tokens
from docbeam.model.tokenizer import SpecialTokens
from docbeam.pipeline.core.flags import STRIDE_TOKENS
from docbeam.pipeline.core.records import Document, Segment
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE, sentences

BLOCK_CHARS = 100_000
# Bumped whenever the same text and settings can give other chunks: part of every document's
# fingerprint, so `--reuse` never copies chunks cut by an older rule.
CHUNKING_VERSION = 5  # 3: a list item starts a sentence block (sentences.py); 4: a hard block cut is inside a word
# 5: Markdown read as its own format: the same text gets sections (headings) its chunks lacked

# Boundary after a token, weakest to strongest.
INSIDE, WORD, SPACE, SENTENCE, PARAGRAPH = 0, 1, 2, 3, 4


def default_stride(max_seq_len: int) -> int:
    """--stride when not given: STRIDE_TOKENS, an eighth of the window for shorter windows."""
    return min(STRIDE_TOKENS, max_seq_len // 8)


@dataclass(frozen=True)
class Windowing:
    max_seq_len: int  # tokens per window, the model's special tokens included
    stride: int  # target number of tokens consecutive windows share (Windowing.of: the default)
    specials: int = 2  # special tokens the model wraps every window in ([CLS] ... [SEP])
    slack: float = 0.2  # the last fraction of a window in which a sentence end is preferred
    # No language here: sentence rules are each document's own (Document.language).

    def __post_init__(self):
        if self.max_seq_len < 8:
            raise ValueError(f"max_seq_len {self.max_seq_len} too small (>= 8)")
        if not 0 <= self.stride < self.content // 2:
            raise ValueError(
                f"stride {self.stride} must be in [0, {self.content // 2}) for max_seq_len {self.max_seq_len}"
            )

    @classmethod
    def of(cls, max_seq_len: int, stride: int | None = None, **kw) -> "Windowing":
        """The one place the default stride applies: jobs, NER windows and queries alike."""
        return cls(max_seq_len, default_stride(max_seq_len) if stride is None else stride, **kw)

    @property
    def content(self) -> int:
        return self.max_seq_len - self.specials


@dataclass
class Block:
    """Tokens of a piece of text: ids, character offsets [n, 2], and the boundary after each token."""

    ids: np.ndarray
    offsets: np.ndarray
    after: np.ndarray  # int8 [n]: INSIDE .. PARAGRAPH


def text_blocks(text: str, size: int = BLOCK_CHARS) -> Iterator[tuple[int, str]]:
    """(offset, block) pieces of at most ~size chars, cut after a blank line where there is
    one in the second half of the block, else at whitespace, else (no whitespace at all) hard."""
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            para = text.rfind("\n\n", start + size // 2, end - 1)
            cut = para + 1 if para >= 0 else max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = cut + 1 if cut > start else end
        yield start, text[start:end]
        start = end


def _boundaries(text: str, offset: int, enc, language: str) -> Block:
    ids = np.asarray(enc.ids, np.int32)
    n = len(ids)
    # (start, end) tuples flattened in C: np.asarray walks a list of tuples ~3x slower.
    offs = np.fromiter(itertools.chain.from_iterable(enc.offsets), np.int64, 2 * n).reshape(-1, 2) + offset
    after = np.zeros(n, np.int8)
    if n > 1:
        words = np.asarray(enc.word_ids, np.float64)  # None (a special token) -> nan: never equal
        after[:-1] = np.where(words[:-1] != words[1:], WORD, INSIDE)
        after[:-1] = np.maximum(after[:-1], np.where(offs[1:, 0] > offs[:-1, 1], SPACE, INSIDE))
    found = sentences(text, language) if len(ids) else []  # no tokens: no boundary to mark
    if found:
        ends = offs[:, 1]
        sent_ends = np.asarray([s.end for s in found], np.int64) + offset
        level = np.asarray([PARAGRAPH if s.paragraph_end else SENTENCE for s in found], np.int8)
        i = np.searchsorted(ends, sent_ends, side="right") - 1  # last token ending by each sentence end
        hit = (i >= 0) & (ends[np.maximum(i, 0)] == sent_ends)
        np.maximum.at(after, i[hit], level[hit])
    return Block(ids, offs, after)


# str.lower() lowercases a capital sigma by its context (final or not); BERT's normalizer does not.
_CONTEXTUAL = frozenset("\u03a3")


class FastTokens:
    """`encode_batch(texts)`: what `tokenizer.encode_batch(texts, add_special_tokens=False)`
    gives, the very same ids, offsets and word ids, for less CPU.

    BERT's normalizer (clean control characters, space out CJK, NFD and strip accents,
    lowercase) builds an alignment for every character of every text: about a quarter of
    tokenising English prose on one core. Where each character of a text normalises to its own
    str.lower(), one character to one, the normalized text is `text.lower()` (whitespace aside:
    the normalizer makes it a space, and BERT's pre-tokenizer splits at either) and its
    alignments are the identity; so a copy of the tokenizer without its normalizer, given
    `text.lower()`, returns the same encodings. Each character is vetted once per process
    against the tokenizer itself (probe texts encoded both ways); a text with any other
    character (an accent, CJK, a control character, a combining mark, a capital sigma) or with
    an added token's text in it (`[MASK]` is matched before normalising, case and all) is
    tokenised the usual way. Other tokenizers (no BERT normalizer and pre-tokenizer): always."""

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        spec = json.loads(tokenizer.to_str())  # its padding and truncation as they are now
        norm, pre = spec.get("normalizer") or {}, spec.get("pre_tokenizer") or {}
        self.raw: Tokenizer | None = None
        if norm.get("type") == "BertNormalizer" and norm.get("lowercase") and pre.get("type") == "BertPreTokenizer":
            spec["normalizer"] = None
            self.raw = Tokenizer.from_str(json.dumps(spec))
        self.added = tuple({t["content"].lower() for t in spec.get("added_tokens", []) if t["content"]})
        self.safe: set[str] = set()
        self.unsafe: set[str] = set()

    def _vet(self, c: str) -> bool:
        assert self.raw is not None
        low = c.lower()
        try:
            norm = self.tokenizer.normalizer.normalize_str(c)
        except Exception:  # a lone surrogate: the usual way fails as it always did
            norm = None
        ok = (
            norm is not None
            and c not in _CONTEXTUAL
            and len(low) == 1
            and unicodedata.combining(c) == 0
            and (norm == low or (norm == " " and c.isspace()))
        )
        if ok:  # and the tokenizer agrees: each probe encodes the same both ways
            for probe in (c, f"a{c}b", f"x {c} y", f"{c}{c}z", f"Ab{c}. Cd", f"[{c}]"):
                a = self.tokenizer.encode(probe, add_special_tokens=False)
                b = self.raw.encode(probe.lower(), add_special_tokens=False)
                if (a.ids, a.offsets, a.word_ids) != (b.ids, b.offsets, b.word_ids):
                    ok = False
                    break
        (self.safe if ok else self.unsafe).add(c)
        return ok

    def eligible(self, text: str) -> bool:
        """Whether `text` encodes the same through the copy without a normalizer."""
        if self.raw is None:
            return False
        new = set(text) - self.safe
        if new and (new & self.unsafe or not all([self._vet(c) for c in sorted(new)])):
            return False
        low = text.lower()
        return not any(a in low for a in self.added)

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        fast = [self.eligible(t) for t in texts]
        out: list[Encoding | None] = [None] * len(texts)
        for flag, tok in ((True, self.raw), (False, self.tokenizer)):
            at = [i for i, f in enumerate(fast) if f is flag]
            if at and tok is not None:
                batch = [texts[i].lower() if flag else texts[i] for i in at]
                for i, enc in zip(at, tok.encode_batch(batch, add_special_tokens=False)):
                    out[i] = enc
        return out  # type: ignore[return-value]  # every index filled


@functools.lru_cache(maxsize=16)  # one per tokenizer object, as slices_are_exact
def fast_tokens(tokenizer: Tokenizer) -> FastTokens:
    return FastTokens(tokenizer)


def token_blocks(tokenizer: Tokenizer, text: str, language: str = DEFAULT_LANGUAGE) -> Iterator[Block]:
    """The text's tokens block by block, with the boundary after each token (the last token of
    a block gets its whitespace boundary from the next block's first offset, in `windows`)."""
    blocks = text_blocks(text)
    while group := [b for _, b in zip(range(8), blocks)]:  # 8 blocks per call: bounded, batched
        for (offset, block), enc in zip(group, fast_tokens(tokenizer).encode_batch([b for _, b in group])):
            if enc.ids:
                yield _boundaries(block, offset, enc, language)


def _concat(a: Block, b: Block) -> Block:
    after = np.concatenate([a.after, b.after])
    if len(a.ids) and len(b.ids):  # a's last token: is there whitespace before b's first?
        last = len(a.ids) - 1
        if b.offsets[0, 0] > a.offsets[-1, 1]:
            after[last] = max(after[last], SPACE)
        else:
            # No: text_blocks found no whitespace to cut at and cut hard, inside a word (a 50 MB
            # one-word field), where a's sentences saw the end of a text. A window ending here cuts it.
            after[last] = INSIDE
    return Block(np.concatenate([a.ids, b.ids]), np.concatenate([a.offsets, b.offsets]), after)


def _end(after: np.ndarray, s: int, content: int, slack: float) -> tuple[int, bool]:
    """Where a window of at most `content` tokens starting at token s ends (exclusive), and
    whether that cuts a word."""
    hi = s + content
    lo = s + max(1, int(content * (1 - slack)))
    tail = after[lo - 1 : hi]
    for level in (PARAGRAPH, SENTENCE):
        found = np.flatnonzero(tail >= level)
        if len(found):
            return lo + int(found[-1]), False
    for level in (SPACE, WORD):
        found = np.flatnonzero(after[s:hi] >= level)
        if len(found):
            return s + 1 + int(found[-1]), False
    return hi, True


def _next_start(after: np.ndarray, s: int, e: int, stride: int, full: bool) -> tuple[int, bool]:
    """Where the window after [s, e) starts: the first sentence start, else word start, in the
    last `stride` tokens of [s, e); else e itself if that starts a word; else a cut. A window
    that ended early (a word too long to join it follows) is not overlapped: e itself."""
    lo = max(s + 1, e - stride) if full else e
    before = after[lo - 1 : e - 1]  # the boundary before each candidate start lo .. e-1
    for level in (SENTENCE, SPACE, WORD):
        found = np.flatnonzero(before >= level)
        if len(found):
            return lo + int(found[0]), False
    if after[e - 1] >= WORD:
        return e, False
    return lo, True


Retokenize = Callable[[int, int], list[int]]  # (start_char, end_char) -> the tokens of that text
KEEP_TOKENS = 1 << 16  # tokens a window buffer keeps before it drops what no window will read


def windows(
    blocks: Iterable[Block], win: Windowing, retokenize: Retokenize | None = None, exact: bool = True
) -> Iterator[tuple[list[int] | np.ndarray, int, int, bool]]:
    """Windows over a stream of token blocks: (content ids, start_char, end_char, cut_in_word).

    A window's ids are the slice of the stream's when `exact` and it cuts no word; otherwise
    `retokenize` gives them from the window's own text (without it, the slice). A window whose
    own text tokenises longer than it may gets a smaller budget and a new end before the next
    window is placed, so coverage holds."""
    buf = Block(np.zeros(0, np.int32), np.zeros((0, 2), np.int64), np.zeros(0, np.int8))
    it = iter(blocks)
    exhausted, s, cut_start = False, 0, False
    while True:
        # One token past the window's end must be known: its offset says if a word ends there.
        while not exhausted and len(buf.ids) - s < win.content + 1:
            nxt = next(it, None)
            if nxt is None:
                exhausted = True
                if len(buf.ids):
                    buf.after[-1] = PARAGRAPH  # the end of the text
            else:
                buf = _concat(buf, nxt)
        n = len(buf.ids)
        if n == s:
            return
        budget = win.content
        while True:
            if exhausted and n - s <= budget:
                e, cut_end = n, False
            else:
                e, cut_end = _end(buf.after, s, budget, win.slack)
            start, end = int(buf.offsets[s, 0]), int(buf.offsets[e - 1, 1])
            own = retokenize is not None and (not exact or cut_start or cut_end)
            ids = retokenize(start, end) if retokenize is not None and own else buf.ids[s:e]
            if len(ids) <= win.content or e - s == 1:
                break
            budget = min(budget, e - s) - (len(ids) - win.content)  # shrink by the excess, retry
        yield ids[: win.content], start, end, cut_start or cut_end
        if e == n and exhausted:
            return
        s, cut_start = _next_start(buf.after, s, e, win.stride, full=e - s >= win.content * (1 - win.slack))
        if s > KEEP_TOKENS:  # drop what no window will read again: memory stays bounded
            buf = Block(buf.ids[s:], buf.offsets[s:], buf.after[s:])
            s = 0


@functools.lru_cache(maxsize=16)  # one answer per tokenizer object: reading its JSON costs ~40 ms
def slices_are_exact(tokenizer: Tokenizer) -> bool:
    """Whether the tokens of a chunk's text are the document's tokens between two word
    boundaries: true for WordPiece behind BERT's (or a whitespace) pre-tokenizer; not for
    byte-level BPE or SentencePiece, whose first token of a text depends on what precedes it."""
    spec = json.loads(tokenizer.to_str())
    pre = spec.get("pre_tokenizer") or {}
    kinds = {p.get("type") for p in pre.get("pretokenizers", [pre])}
    return spec["model"]["type"] == "WordPiece" and bool(kinds) and kinds <= {"BertPreTokenizer", "Whitespace"}


@dataclass(frozen=True)
class Frame:
    """What every window of a model is wrapped in: its special tokens and, where the checkpoint
    defines one, the prompt documents get (in front of every window, as sentence-transformers
    puts it in front of a text). `pool_from` is where pooling starts when the checkpoint's
    Pooling leaves the prompt out."""

    special: SpecialTokens
    prompt: PromptTokens | None = None
    include_prompt: bool = True

    @classmethod
    def of(cls, ckpt: Checkpoint, prompt_name: str | None = None, *, query: bool = False) -> "Frame":
        """A checkpoint's frame: the prompt named (`--prompt-name`), else the one the checkpoint
        gives documents (or queries, with `query`). CheckpointError for an unknown name."""
        prompts = ckpt.config.head.prompts
        if prompt_name is not None:
            name = prompts.resolve(prompt_name, "--prompt-name")
        else:
            name = prompts.query if query else prompts.document
        if name is None:
            return cls(ckpt.special)
        tokens = prompt_tokens(ckpt.tokenizer, name, prompts.texts[name], len(ckpt.special.prefix))
        return cls(ckpt.special, tokens, ckpt.config.head.include_prompt)

    @property
    def count(self) -> int:
        """Tokens of a window that are not the text's: the model's content budget is the rest."""
        return self.special.count + (len(self.prompt.ids) if self.prompt else 0)

    @property
    def pool_from(self) -> int:
        return 0 if self.prompt is None or self.include_prompt else self.prompt.pool_skip

    def wrap(self, content) -> list[int]:
        return self.special.wrap([*(self.prompt.ids if self.prompt else ()), *content])

    def own_tokens(self, tokenizer: Tokenizer, text: str) -> list[int]:
        """The content tokens of `text` as the model sees it behind the prompt: the prompt and
        the text tokenised as one string (the way sentence-transformers does), less the
        prompt's own tokens."""
        if self.prompt is None:
            return tokenizer.encode(text, add_special_tokens=False).ids
        joint = tokenizer.encode(self.prompt.text + text, add_special_tokens=False).ids
        n = len(self.prompt.ids)
        return (
            joint[n:] if tuple(joint[:n]) == self.prompt.ids else tokenizer.encode(text, add_special_tokens=False).ids
        )

    def slices_are_exact(self, tokenizer: Tokenizer) -> bool:
        # Behind a prompt, a slice is the text's own tokens only when the prompt ends in a space.
        return slices_are_exact(tokenizer) and (self.prompt is None or self.prompt.text[-1:].isspace())


class DocChunks:
    """A document's chunks, produced as they are iterated; `n_tokens` (the text's tokens, no
    special tokens, overlaps counted once) is complete once they all have been."""

    def __init__(self, doc: Document, blocks: Iterable[Block], tokenizer: Tokenizer, frame: Frame, win: Windowing):
        self.doc, self.blocks, self.tokenizer, self.frame, self.win = doc, blocks, tokenizer, frame, win
        self.exact = frame.slices_are_exact(tokenizer)
        self.n_tokens = 0

    def _counted(self) -> Iterator[Block]:
        for block in self.blocks:
            self.n_tokens += len(block.ids)
            yield block

    def _own(self, start: int, end: int) -> list[int]:
        return self.frame.own_tokens(self.tokenizer, self.doc.text[start:end])

    def __iter__(self) -> Iterator[Segment]:
        doc, frame = self.doc, self.frame
        # Exact slices still need a cut window's own text tokenised ("##ness" alone is "ness").
        for index, (content, start, end, cut) in enumerate(windows(self._counted(), self.win, self._own, self.exact)):
            yield Segment(
                uid=doc.uid,
                doc_id=doc.doc_id,
                kind="chunk",
                index=index,
                start_char=start,
                end_char=end,
                ids=np.asarray(frame.wrap(content), np.int32),
                cut_in_word=cut,
                pool_from=frame.pool_from,
            )


def chunk_documents(
    docs: list[Document], tokenizer: Tokenizer, frame: Frame | SpecialTokens, win: Windowing
) -> Iterator[tuple[Document, DocChunks]]:
    """Each document with its chunks, its sentences cut by its own language's rules. Short texts
    are tokenised together in one batch call; long ones stream block by block, so a 50 MB
    document never sits in memory as tokens."""
    frame = frame if isinstance(frame, Frame) else Frame(frame)
    short = [d for d in docs if len(d.text) <= BLOCK_CHARS]
    encoded = fast_tokens(tokenizer).encode_batch([d.text for d in short])
    for doc, enc in zip(short, encoded):
        blocks = [_boundaries(doc.text, 0, enc, doc.language or DEFAULT_LANGUAGE)] if enc.ids else []
        yield doc, DocChunks(doc, blocks, tokenizer, frame, win)
    for doc in docs:
        if len(doc.text) > BLOCK_CHARS:
            streamed = token_blocks(tokenizer, doc.text, doc.language or DEFAULT_LANGUAGE)
            yield doc, DocChunks(doc, streamed, tokenizer, frame, win)


def encode_short(texts: list[str], tokenizer: Tokenizer, special: SpecialTokens, max_seq_len: int) -> list[np.ndarray]:
    """Batch-encode short texts (phrases, sentences, labels) into single windows, truncated."""
    out = []
    for enc in tokenizer.encode_batch(texts, add_special_tokens=False):
        content = enc.ids[: max_seq_len - special.count]
        out.append(np.asarray(special.wrap(content), np.int32))
    return out
