"""Chunking: windows are retrieval units (word and sentence boundaries), cover the text, overlap
by about `stride`, and carry exactly the tokens of their own text. Adversarial texts included."""

import numpy as np
import pytest

from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core.records import Document
from docbeam.pipeline.ingest.chunking import BLOCK_CHARS, Windowing, chunk_documents, text_blocks
from docbeam.pipeline.ingest.sentences import sentences
from tests.corpus import build_corpus


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(default_checkpoint_dir())


def doc(text: str, uid: str = "u") -> Document:
    return Document(uid=uid, doc_id=uid, source="src", row=0, text=text)


def chunk(tok, text: str, win: Windowing):
    tokenizer, special = tok
    ((_, chunks),) = list(chunk_documents([doc(text)], tokenizer, special, win))
    return list(chunks), chunks.n_tokens


def check_invariants(tok, text: str, segs, win: Windowing) -> None:
    """What every chunking must satisfy, whatever the text."""
    tokenizer, special = tok
    whole = tokenizer.encode(text, add_special_tokens=False)
    assert segs, "a text with tokens has at least one chunk"
    for s in segs:
        assert 0 <= s.start_char < s.end_char <= len(text) and s.n_tokens <= win.max_seq_len
        piece = text[s.start_char : s.end_char]
        assert piece == piece.strip(), "chunks start and end on token characters"
        # the contract: the chunk's tokens are the tokens of its own text
        assert s.ids.tolist() == special.wrap(tokenizer.encode(piece, add_special_tokens=False).ids)
    # coverage: every token of the text lies inside some chunk; consecutive chunks meet or overlap
    starts = np.asarray([o[0] for o in whole.offsets])
    covered = np.zeros(len(starts), bool)
    for s in segs:
        covered |= (starts >= s.start_char) & (starts < s.end_char)
    assert covered.all(), f"{(~covered).sum()} tokens fall between chunks"
    assert segs[0].start_char == whole.offsets[0][0] and segs[-1].end_char == whole.offsets[-1][1]
    first = np.searchsorted(starts, [s.start_char for s in segs])  # each chunk's first token
    last = np.searchsorted(starts, [s.end_char for s in segs]) - 1  # and last token
    assert (np.diff(first) > 0).all() and (first[1:] <= last[:-1] + 1).all(), "chunks advance and meet or overlap"


def test_short_text_is_one_window_matching_plain_encoding(tok):
    tokenizer, special = tok
    text = "The quick brown fox jumps over the lazy dog."
    (seg,), n = chunk(tok, text, Windowing(256, 32))
    assert seg.ids.tolist() == special.wrap(tokenizer.encode(text, add_special_tokens=False).ids)
    assert (seg.start_char, seg.end_char, seg.cut_in_word) == (0, len(text), False) and n == seg.n_tokens - 2


@pytest.mark.parametrize("seed", [3, 4])
def test_long_prose_ends_at_sentences_starts_at_words_and_overlaps_by_about_stride(tok, seed):
    text = "\n\n".join(d["text"] for d in build_corpus(6, seed=seed, min_words=300, max_words=300))
    win = Windowing(64, 16)
    segs, n_tokens = chunk(tok, text, win)
    check_invariants(tok, text, segs, win)
    assert n_tokens == len(tok[0].encode(text, add_special_tokens=False).ids)  # overlaps counted once
    ends = {s.end for s in sentences(text)}
    starts = {s.start for s in sentences(text)}
    inner = segs[:-1]
    assert not any(s.cut_in_word for s in segs)
    for s in segs:  # never inside a word: whitespace (or the text's edge) on both sides
        assert s.start_char == 0 or not (text[s.start_char - 1].isalnum() and text[s.start_char].isalnum())
        assert s.end_char == len(text) or not (text[s.end_char - 1].isalnum() and text[s.end_char].isalnum())
    whole = tok[0].encode(text, add_special_tokens=False)
    first_token = {o[0]: i for i, o in enumerate(whole.offsets)}
    last_token = {o[1]: i for i, o in enumerate(whole.offsets)}
    checked = 0
    for w in inner:  # a sentence end within the window's last 20% is where it ends
        first = first_token[w.start_char]
        slack = range(first + int(win.content * 0.8) - 1, first + win.content)
        if any(whole.offsets[i][1] in ends for i in slack if i < len(whole.offsets)):
            assert w.end_char in ends, text[w.start_char : w.end_char][-80:]
            checked += 1
    assert checked >= 10, "the corpus must exercise the sentence rule"
    assert sum(w.start_char in starts for w in segs[1:]) >= 5, "windows start at sentences where the overlap has one"
    for a, b in zip(segs, segs[1:]):
        shared = last_token[a.end_char] - first_token[b.start_char] + 1
        assert 0 <= shared <= win.stride, "overlap is at most the stride target"


def test_unicode_offsets_point_at_the_right_characters(tok):
    text = "Zoë visited Zürich — café “Ørsted” at 10:30. Ça va? Ja, natürlich! " * 40
    win = Windowing(32, 8)
    segs, _ = chunk(tok, text, win)
    check_invariants(tok, text, segs, win)
    assert all(text[s.end_char - 1] in ".?!" for s in segs[:-1])


@pytest.mark.parametrize(
    ("name", "text", "flagged"),
    [
        # WordPiece reads at most 100 characters as one word; x7x7... is one token a character
        ("a word longer than a window", "A key: " + "x7" * 49 + " and more words after it.", True),
        ("words of 98 tokens, no spaces between windows", " ".join(["x7" * 49] * 6), True),
        # MiniLM's vocabulary has no Thai: a run without spaces is one [UNK], not a cut
        ("Thai without spaces", "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ" * 60, False),
        ("CJK sentences", "東京は日本の首都です。人口は多いです。" * 80, False),
        ("one sentence longer than a window", " ".join(["word"] * 700) + ".", False),
        ("hard-wrapped lines", "\n".join(["This line is wrapped by hand at forty chars"] * 60), False),
    ],
)
def test_adversarial_texts(tok, name, text, flagged):
    win = Windowing(64, 16)
    segs, _ = chunk(tok, text, win)
    check_invariants(tok, text, segs, win)
    assert any(s.cut_in_word for s in segs) == flagged, name
    if not flagged:  # CJK: cuts at the sentence ends 。; long sentences: at spaces
        for s in segs[:-1]:
            assert text[s.end_char - 1] == "。" or text[s.end_char].isspace(), name


def test_a_five_megabyte_line_streams_in_blocks(tok):
    text = " ".join(d["text"] for d in build_corpus(40, seed=9, min_words=400, max_words=400))
    text = (text + " ") * (5_000_000 // len(text) + 1)
    text = text[:5_000_000].rstrip()
    win = Windowing(256, 32)
    segs, n_tokens = chunk(tok, text, win)
    assert len(segs) > 4000 and segs[-1].end_char == len(text)
    whole = tok[0].encode(text, add_special_tokens=False)
    assert n_tokens == len(whole.ids)
    starts = np.asarray([o[0] for o in whole.offsets])
    first = np.searchsorted(starts, [s.start_char for s in segs])
    last = np.searchsorted(starts, [s.end_char for s in segs]) - 1
    assert (np.diff(first) > 0).all() and (first[1:] <= last[:-1] + 1).all(), "chunks advance and meet or overlap"
    tokenizer, special = tok
    for s in segs[::500]:  # spot checks of the contract across block edges
        assert s.ids.tolist() == special.wrap(
            tokenizer.encode(text[s.start_char : s.end_char], add_special_tokens=False).ids
        )


def test_a_word_longer_than_a_block_is_cut_inside_a_word_and_says_so(tok):
    """A 50 MB one-word field was split into chunks with cut_in_word false: a long text is
    tokenised in blocks, and one without whitespace is cut hard, inside its word, where each
    block's sentences saw a text end. (WordPiece reads a word over 100 letters as one [UNK], so
    a word of letters exceeds a window only through blocks: eight here, for a window of six.)"""
    text = "a" * (7 * BLOCK_CHARS + 1)
    win = Windowing(8, 0)
    segs, _ = chunk(tok, text, win)
    check_invariants(tok, text, segs, win)
    assert len(segs) > 1 and all(s.cut_in_word for s in segs)


def test_text_blocks_cut_at_paragraphs_then_whitespace():
    text = "abc def " * 1000
    blocks = list(text_blocks(text, 100))
    assert "".join(b for _, b in blocks) == text and all(b.endswith(" ") for _, b in blocks[:-1])
    paras = "one two three.\n\nfour five six.\n\n" * 20
    assert all(b.endswith("\n\n") for _, b in list(text_blocks(paras, 100))[:-1])
    assert list(text_blocks("x" * 250, 100)) == [(0, "x" * 100), (100, "x" * 100), (200, "x" * 50)]


def test_windowing_validation():
    with pytest.raises(ValueError, match="stride"):
        Windowing(16, 7)
    with pytest.raises(ValueError, match="too small"):
        Windowing(4, 0)
