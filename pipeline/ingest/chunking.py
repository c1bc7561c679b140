"""Document -> token windows with character offsets. Pure: no Beam here.

A document longer than the window is split into overlapping windows so the whole text is
embedded, never truncated. `stride` is the number of tokens consecutive windows share
(the meaning HF tokenizers give it). Long texts are tokenised in blocks cut at whitespace,
which BERT's pre-tokenizer treats as a token boundary anyway, so memory stays bounded
and the tokens are the same as tokenising the whole text.
"""

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer

from model.tokenizer import SpecialTokens
from pipeline.core.records import Document, Segment

BLOCK_CHARS = 100_000


@dataclass(frozen=True)
class Windowing:
    max_seq_len: int = 256  # tokens per window including [CLS] and [SEP]
    stride: int = 32  # tokens shared by consecutive windows

    def __post_init__(self):
        if self.max_seq_len < 8:
            raise ValueError(f"max_seq_len {self.max_seq_len} too small (>= 8)")
        if not 0 <= self.stride < self.content:
            raise ValueError(f"stride {self.stride} must be in [0, {self.content}) for max_seq_len {self.max_seq_len}")

    @property
    def content(self) -> int:
        return self.max_seq_len - 2


def text_blocks(text: str, size: int = BLOCK_CHARS) -> Iterator[tuple[int, str]]:
    """(offset, block) pieces of at most ~size chars, cut at whitespace where there is any."""
    start = 0
    while start < len(text):
        end = min(start + size, len(text))
        if end < len(text):
            cut = max(text.rfind(" ", start, end), text.rfind("\n", start, end))
            end = cut + 1 if cut > start else end
        yield start, text[start:end]
        start = end


def token_stream(tokenizer: Tokenizer, text: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(ids int32 [n], char offsets int64 [n, 2]) per block of the text."""
    blocks = text_blocks(text)
    while group := [b for _, b in zip(range(8), blocks)]:  # 8 blocks per call: bounded, batched
        for (offset, _), enc in zip(group, tokenizer.encode_batch([b for _, b in group], add_special_tokens=False)):
            if enc.ids:
                yield np.asarray(enc.ids, np.int32), np.asarray(enc.offsets, np.int64) + offset


def windows(blocks: Iterable[tuple[np.ndarray, np.ndarray]], win: Windowing) -> Iterator[tuple[np.ndarray, int, int]]:
    """Overlapping windows over a stream of token blocks: (content ids, start_char, end_char)."""
    ids = np.zeros(0, np.int32)
    offs = np.zeros((0, 2), np.int64)
    step = win.content - win.stride
    exhausted = False
    it = iter(blocks)
    while True:
        while not exhausted and len(ids) < win.content + 1:
            nxt = next(it, None)
            if nxt is None:
                exhausted = True
            else:
                ids, offs = np.concatenate([ids, nxt[0]]), np.concatenate([offs, nxt[1]])
        if len(ids) == 0:
            return
        n = min(win.content, len(ids))
        yield ids[:n], int(offs[0, 0]), int(offs[n - 1, 1])
        if exhausted and n == len(ids):
            return
        ids, offs = ids[step:], offs[step:]


def chunk_segments(
    doc: Document, blocks: Iterable[tuple[np.ndarray, np.ndarray]], special: SpecialTokens, win: Windowing
) -> Iterator[Segment]:
    """The document's chunks: [CLS] window [SEP], with the characters each window covers."""
    for index, (content, start, end) in enumerate(windows(blocks, win)):
        ids = np.asarray(special.wrap(content), np.int32)
        yield Segment(
            uid=doc.uid, doc_id=doc.doc_id, kind="chunk", index=index, start_char=start, end_char=end, ids=ids
        )


def chunk_documents(
    docs: list[Document], tokenizer: Tokenizer, special: SpecialTokens, win: Windowing
) -> Iterator[tuple[Document, Iterator[Segment]]]:
    """Each document with its chunks. Short texts are tokenised together in one batch call;
    long ones stream block by block, so a 50 MB document never sits in memory as tokens."""
    short = [d for d in docs if len(d.text) <= BLOCK_CHARS]
    encoded = tokenizer.encode_batch([d.text for d in short], add_special_tokens=False) if short else []
    for doc, enc in zip(short, encoded):
        blocks = [(np.asarray(enc.ids, np.int32), np.asarray(enc.offsets, np.int64))] if enc.ids else []
        yield doc, chunk_segments(doc, blocks, special, win)
    for doc in docs:
        if len(doc.text) > BLOCK_CHARS:
            yield doc, chunk_segments(doc, token_stream(tokenizer, doc.text), special, win)


def encode_short(texts: list[str], tokenizer: Tokenizer, special: SpecialTokens, max_seq_len: int) -> list[np.ndarray]:
    """Batch-encode short texts (phrases, sentences, labels) into single windows, truncated."""
    out = []
    for enc in tokenizer.encode_batch(texts, add_special_tokens=False):
        content = enc.ids[: max_seq_len - special.count]
        out.append(np.asarray(special.wrap(content), np.int32))
    return out
