"""The classifier's windows: the chunks' character spans in its own tokens, split again where
a span exceeds its window (pipeline.ingest.ner_windows)."""

import pytest

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.ingest.chunking import BLOCK_CHARS, Windowing, chunk_documents
from docbeam.pipeline.ingest.ner_windows import model_windows
from tests.corpus import varied_texts
from tests.extractors.ner_checkpoints import ner_checkpoint
from tests.extractors.ner_reference import documents, embedding_chunker


@pytest.fixture(scope="module", params=["bert", "xlm-roberta"])
def classifier(request):
    """(tokenizer, special tokens) of a classifier: BERT's WordPiece (windows could be slices of
    the document's tokens) or XLM-R's Unigram (they could not)."""
    return load_tokenizer(ner_checkpoint(request.param))


def test_windows_follow_the_chunks_and_carry_their_own_tokens(classifier):
    tok, special = classifier
    texts = [t for t in varied_texts(120, seed=9) if len(t.split()) > 100][:8]
    big = " ".join(varied_texts(200, seed=4))  # streamed in blocks by the chunker: comes back last
    while len(big) <= BLOCK_CHARS:
        big += " " + big
    docs = documents([big, *texts, "", "   "])
    chunker = embedding_chunker(max_seq_len=128)
    windowing = Windowing(72, 16, specials=special.count)
    spans = {
        d.doc_id: [(c.start_char, c.end_char) for c in chunks]
        for d, chunks in chunk_documents(docs, chunker.tokenizer, chunker.frame, chunker.windowing)
    }
    found = list(model_windows(docs, chunker, tok, special, windowing))
    assert [d.doc_id for d, _ in found] == [d.doc_id for d in docs]
    split = 0
    for doc, windows in found:
        assert [w.index for w in windows] == list(range(len(windows)))
        for w in windows:
            assert w.kind == "ner" and w.uid == doc.uid and w.text == doc.text[w.start_char : w.end_char]
            own = tok.encode(w.text, add_special_tokens=False).ids
            assert w.ids.tolist() == special.wrap(own) and w.n_tokens <= windowing.max_seq_len
        rest = iter(windows)  # in order: each chunk's span, covered by its own windows
        for start, end in spans[doc.doc_id]:
            piece = [next(rest)]
            assert piece[0].start_char == start
            while piece[-1].end_char != end:
                piece.append(next(rest))
                a, b = piece[-2], piece[-1]
                assert a.start_char < b.start_char and not doc.text[a.end_char : b.start_char].strip()  # no gap
            assert all(start <= w.start_char and w.end_char <= end for w in piece)
            split += len(piece) - 1
        assert next(rest, None) is None
    assert split > 0  # spans longer than 72 of the classifier's tokens were split again
    assert found[-1][1] == [] and found[-2][1] == []  # no tokens, no windows
