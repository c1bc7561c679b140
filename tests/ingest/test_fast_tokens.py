"""chunking.FastTokens: the lower-case fast path gives the very encodings (ids, offsets, word
ids) the tokenizer gives, on any text; texts it cannot vouch for go the usual way."""

import random

import pytest

from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.ingest.chunking import FastTokens
from tests.corpus import build_corpus, varied_texts

UNICODE = [
    "Café naïve résumé ÉCOLE Straße İstanbul ΣΊΣΥΦΟΣ σοφός ﬁne ﬀ",
    "e\u0301te\u0301 A\u030a coöperate",
    "中文文本混合English和数字123。日本語のテキスト、カタカナ",
    "tab\tnew\nline\r\nnbsp\u00a0thin\u2009ideographic\u3000zero\u200bwidth\u200dj",
    "ctrl\x01\x02\x7f\x85 del \x0b vt \x0c ff",
    "emoji 😀👍🏽 flags 🇫🇷 x",
    "ŁÓDŹ Ærø Þór ǅemal ǈ ǋ Ǆ ǅ ǆ",
    "supercalifragilistic" * 30,
    "\ufffd replacement \ufffd",
    "ＡＢＣ fullwidth ａｂｃ Ⅻ roman ⅻ ℌ ℍ Ω Å K",
    "Привет мир ДОБРО; مرحبا بالعالم; שלום עולם; हिन्दी पाठ; ไทยภาษา",
    "ß ẞ ﬆ İi Iı ΌΣΟΣ ὈΔΥΣΣΕΎΣ A\u0345 \u0390",
    "Hello [MASK] world [CLS] x [SEP] [PAD] [UNK] [mask] [Mask]",
    "ALL CAPS HEADLINE: THE END.",
]


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(default_checkpoint_dir())[0]


def same(tok, texts: list[str]) -> None:
    fast = FastTokens(tok).encode_batch(texts)
    slow = tok.encode_batch(texts, add_special_tokens=False)
    for text, a, b in zip(texts, fast, slow):
        assert (a.ids, a.offsets, a.word_ids) == (b.ids, b.offsets, b.word_ids), repr(text)


def test_fast_path_is_taken_for_plain_text(tok):
    ft = FastTokens(tok)
    texts = [d["text"] for d in build_corpus(50, seed=3)]
    assert all(ft.eligible(t) for t in texts)  # else the cut buys nothing
    same(tok, texts + varied_texts(60))


def test_unicode_and_special_tokens_encode_as_the_tokenizer_does(tok):
    ft = FastTokens(tok)
    texts = UNICODE + [t.upper() for t in UNICODE] + [t.lower() for t in UNICODE] + [" ".join(UNICODE)]
    same(tok, texts)
    assert not ft.eligible("a [MASK] b") and not ft.eligible("a [cls] b"), "added tokens match before normalising"
    assert not ft.eligible("Café") and not ft.eligible("ΣΊΣΥΦΟΣ") and not ft.eligible("中文")


def test_random_unicode_encodes_as_the_tokenizer_does(tok):
    rng = random.Random(5)
    ranges = [(32, 0x250), (0x370, 0x500), (0x2000, 0x2070), (0x3000, 0x3040), (0x4E00, 0x4E40), (0x1F300, 0x1F340)]
    pool = [chr(c) for a, b in ranges for c in range(a, b)] + list("\t\n\r\x0b\x0c\x85\u00a0")
    words = ["ab ", "Cd. ", "EFG, ", "\n\n", "[MASK]", "[Sep]", "x-y ", "3.14 "]
    texts = [
        "".join(rng.choice(pool) if rng.random() < 0.2 else rng.choice(words) for _ in range(rng.randint(1, 200)))
        for _ in range(400)
    ]
    # and texts of characters the fast path accepts only: each must still encode the same
    ft = FastTokens(tok)
    safe = sorted(c for c in pool if ft.eligible(c))
    texts += ["".join(rng.choice(safe) for _ in range(rng.randint(1, 120))) for _ in range(400)]
    same(tok, texts)


def test_other_tokenizers_always_go_the_usual_way(tok):
    import json

    from tokenizers import Tokenizer

    spec = json.loads(tok.to_str())
    spec["normalizer"]["lowercase"] = False  # a cased BERT: lowercasing would change its tokens
    cased = Tokenizer.from_str(json.dumps(spec))
    ft = FastTokens(cased)
    assert ft.raw is None and not ft.eligible("plain text")
    same(cased, ["Plain Text here.", "UPPER lower"])
