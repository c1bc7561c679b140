import numpy as np
import pytest

from model.checkpoint import default_checkpoint_dir
from model.tokenizer import load_tokenizer
from pipeline.core.records import Document
from pipeline.ingest.chunking import Windowing, chunk_documents, text_blocks, token_stream, windows
from tests.corpus import build_corpus


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(default_checkpoint_dir())


def doc(text: str, uid: str = "u") -> Document:
    return Document(uid=uid, doc_id=uid, source="src", row=0, text=text)


def test_short_text_is_one_window_matching_plain_encoding(tok):
    tokenizer, special = tok
    text = "The quick brown fox jumps over the lazy dog."
    ((_, segs),) = list(chunk_documents([doc(text)], tokenizer, special, Windowing(256, 32)))
    (seg,) = list(segs)
    expected = tokenizer.encode(text, add_special_tokens=False).ids
    assert seg.ids.tolist() == special.wrap(expected)
    assert (seg.start_char, seg.end_char) == (0, len(text))


def test_long_text_windows_overlap_and_cover_every_token(tok):
    tokenizer, special = tok
    text = " ".join(d["text"] for d in build_corpus(5, seed=3, min_words=300, max_words=300))
    win = Windowing(64, 16)
    ((_, segs),) = list(chunk_documents([doc(text)], tokenizer, special, win))
    segs = list(segs)
    all_ids = tokenizer.encode(text, add_special_tokens=False).ids
    assert len(segs) > 5 and all(s.n_tokens <= 64 for s in segs)
    step = win.content - win.stride
    for i, s in enumerate(segs):
        assert s.ids[0] == special.prefix[0] and s.ids[-1] == special.suffix[-1]
        assert s.ids[1:-1].tolist() == all_ids[i * step : i * step + win.content]
    assert segs[-1].ids[-2] == all_ids[-1]  # the whole text is embedded, nothing truncated
    # character offsets: windows start where their first token starts, cover the text end to end
    assert segs[0].start_char == 0 and segs[-1].end_char == len(text.rstrip())
    assert all(a.start_char < b.start_char < a.end_char for a, b in zip(segs, segs[1:]))
    # n_tokens of the document, recovered from the windows, equals the real count
    content = sum(s.n_tokens - 2 for s in segs) - win.stride * (len(segs) - 1)
    assert content == len(all_ids)


def test_offsets_point_at_the_right_characters_with_unicode(tok):
    tokenizer, special = tok
    text = "Zoë visited Zürich — café “Ørsted” at 10:30. " * 40
    win = Windowing(32, 8)
    ((_, segs),) = list(chunk_documents([doc(text)], tokenizer, special, win))
    whole = tokenizer.encode(text, add_special_tokens=False)
    step = win.content - win.stride
    for i, s in enumerate(segs):
        first, last = i * step, min(i * step + win.content, len(whole.ids)) - 1
        assert (s.start_char, s.end_char) == (whole.offsets[first][0], whole.offsets[last][1])
        piece = text[s.start_char : s.end_char]
        assert piece == piece.strip() and piece  # spans start and end on token characters


def test_block_tokenisation_equals_whole_text(tok):
    tokenizer, _ = tok
    text = " ".join(d["text"] for d in build_corpus(40, seed=5))
    whole = tokenizer.encode(text, add_special_tokens=False)
    ids, offs = [], []
    for block in (b for b in token_stream_small(tokenizer, text)):
        ids += block[0].tolist()
        offs += block[1].tolist()
    assert ids == whole.ids and offs == [list(o) for o in whole.offsets]


def token_stream_small(tokenizer, text):
    import pipeline.ingest.chunking as chunking

    old = chunking.BLOCK_CHARS
    chunking.BLOCK_CHARS = 997  # force many blocks, cut mid-sentence
    try:
        yield from token_stream(tokenizer, text)
    finally:
        chunking.BLOCK_CHARS = old


def test_text_blocks_cut_at_whitespace():
    text = "abc def " * 1000
    blocks = list(text_blocks(text, 100))
    assert "".join(b for _, b in blocks) == text
    assert all(b.endswith(" ") for _, b in blocks[:-1])
    assert list(text_blocks("x" * 250, 100)) == [(0, "x" * 100), (100, "x" * 100), (200, "x" * 50)]


def test_windowing_validation():
    with pytest.raises(ValueError, match="stride"):
        Windowing(16, 14)
    with pytest.raises(ValueError, match="too small"):
        Windowing(4, 0)


def test_windows_exact_multiple_has_no_overlap_only_window():
    ids = np.arange(10, dtype=np.int32)
    offs = np.stack([ids, ids + 1], 1).astype(np.int64)
    out = [w[0].tolist() for w in windows([(ids, offs)], Windowing(8, 2))]  # content 6, step 4
    assert out == [[0, 1, 2, 3, 4, 5], [4, 5, 6, 7, 8, 9]]
