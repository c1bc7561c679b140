"""A document's windows for a second model with its own tokenizer (the --ner-model). Pure: no Beam.

The windows are the chunks' character spans (chunk_documents with the embedding model), so
an entity always lies inside a chunk, each span tokenised by the second model's tokenizer;
a span longer than that model's window is split again by the same chunker (sentence, then
word boundaries, consecutive pieces overlapping by about `stride` tokens). Every window's
tokens are its own text's tokens, so whoever reads a window's output can tokenise its text
again and get the same tokens with their offsets.
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from tokenizers import Tokenizer

from docbeam.model.tokenizer import SpecialTokens
from docbeam.pipeline.core.records import Document, Segment
from docbeam.pipeline.ingest.chunking import Frame, Windowing, chunk_documents

KIND = "ner"


class _OwnTokens(Frame):
    """A frame whose windows always carry the tokens of their own text (never a slice of the
    document's tokens, which can differ where a cut falls between two tokens of a word)."""

    def slices_are_exact(self, tokenizer: Tokenizer) -> bool:
        return False


@dataclass(frozen=True)
class Chunker:
    """How a model cuts a text into windows: its tokenizer, frame and window settings."""

    tokenizer: Tokenizer
    frame: Frame
    windowing: Windowing


def model_windows(
    docs: list[Document], chunks: Chunker, tokenizer: Tokenizer, special: SpecialTokens, windowing: Windowing
) -> Iterator[tuple[Document, list[Segment]]]:
    """Each document with its windows for the model of `tokenizer` (kind "ner", indexed from 0
    in text order, `text` the window's characters, `ids` wrapped in `special`)."""
    spans: list[Document] = []
    owner: list[tuple[Document, int]] = []
    found: dict[str, list[Segment]] = {}
    for doc, doc_chunks in chunk_documents(docs, chunks.tokenizer, chunks.frame, chunks.windowing):
        found[doc.uid] = []
        for c in doc_chunks:
            text = doc.text[c.start_char : c.end_char]
            spans.append(Document(uid=str(len(spans)), doc_id=doc.doc_id, source=doc.source, row=doc.row, text=text))
            owner.append((doc, c.start_char))
    # chunk_documents yields long texts last: map pieces back by their position in `spans`.
    pieces: list[list[tuple[int, int, np.ndarray, bool]]] = [[] for _ in spans]
    for span, windows in chunk_documents(spans, tokenizer, _OwnTokens(special), windowing):
        pieces[int(span.uid)] = [(w.start_char, w.end_char, w.ids, w.cut_in_word) for w in windows]
    for (doc, offset), span_pieces in zip(owner, pieces):
        for start, end, ids, cut in span_pieces:
            segs = found[doc.uid]
            segs.append(
                Segment(
                    uid=doc.uid,
                    doc_id=doc.doc_id,
                    kind=KIND,
                    index=len(segs),
                    start_char=offset + start,
                    end_char=offset + end,
                    ids=ids,
                    text=doc.text[offset + start : offset + end],
                    cut_in_word=cut,
                )
            )
    for doc in docs:
        yield doc, found[doc.uid]
