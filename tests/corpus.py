"""Deterministic English corpora for tests and benchmarks, from Python's own documentation
topics (pydoc_data, shipped with CPython): real prose, no download, same on every machine."""

import pydoc_data.topics
import random
import re


def _sentences() -> list[str]:
    text = " ".join(" ".join(pydoc_data.topics.topics[k].split()) for k in sorted(pydoc_data.topics.topics))
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 3]


def build_corpus(n: int = 2000, seed: int = 0, min_words: int = 20, max_words: int = 400) -> list[dict]:
    """n documents of min..max words (uniform), each a run of consecutive sentences."""
    sents = _sentences()
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        target = rng.randint(min_words, max_words)
        at = rng.randrange(len(sents))
        words: list[str] = []
        while len(words) < target:
            words += sents[at % len(sents)].split()
            at += 1
        docs.append({"id": f"doc-{i:05d}", "text": " ".join(words[:target])})
    return docs


def varied_texts(n: int = 200, seed: int = 1) -> list[str]:
    """Texts from 1 word to ~600 words (some longer than one 256-token window)."""
    rng = random.Random(seed)
    lengths = [1, 2, 3, 5, 8] + [rng.randint(5, 180) for _ in range(n - 10)] + [250, 320, 400, 500, 600]
    docs = build_corpus(len(lengths), seed=seed, min_words=1, max_words=1)
    sents = _sentences()
    out = []
    for i, k in enumerate(lengths[:n]):
        at = rng.randrange(len(sents))
        words: list[str] = []
        while len(words) < k:
            words += sents[at % len(sents)].split()
            at += 1
        out.append(" ".join(words[:k]) if k > 1 else docs[i]["text"].split()[0])
    return out
