"""Parity: docbeam's named entities equal the transformers token-classification pipeline's
on the same random-weight checkpoint (BertForTokenClassification and
XLMRobertaForTokenClassification built in tests/extractors/ner_checkpoints.py): same spans,
same labels, scores within 1e-4, for every aggregation strategy.

docbeam's side is the pipeline's own pieces (windows on the chunks' spans, packing, the
encoder runtime, the aggregation); tests/extractors/test_e2e_ner.py runs them in Beam.
"""

import random

import pytest

from docbeam.pipeline.extractors.ner_aggregation import STRATEGIES
from docbeam.pipeline.ingest.chunking import chunk_documents
from tests.corpus import build_corpus, varied_texts
from tests.extractors.ner_checkpoints import ner_checkpoint
from tests.extractors.ner_reference import (
    Docbeam,
    Transformers,
    as_tuples,
    documents,
    embedding_chunker,
    scores,
)
from tests.model.builders import MULTILINGUAL

ARCHS = ("bert", "xlm-roberta")
TOLERANCE = 1e-4

# What named-entity text looks like, and what trips word aggregation: names with hyphens and
# apostrophes, accents, abbreviations with dots, currency, CJK, an emoji ([UNK] for WordPiece),
# a special token's text, newlines and tabs (XLM-R's word heuristic only counts spaces).
PIECES = [
    "Marie Curie",
    "Jean-Baptiste Lamarck",
    "O'Neill & Sons Ltd.",
    "São Paulo",
    "Zürich",
    "the U.S.A.",
    "Microsoft Corporation",
    "¥1.3 trillion",
    "東京",
    "🙂",
    "[SEP]",
    "New York City",
    "Ångström",
    "Dr. Smith",
    "2 February 2022",
]


def parity_texts(n: int = 120, seed: int = 7) -> list[str]:
    """n texts of 1-60 words that fit one window, no leading or trailing whitespace (a window
    starts and ends with a token: the pipeline's text would otherwise hold characters no window has)."""
    rng = random.Random(seed)
    out = []
    for doc in build_corpus(n, seed=seed, min_words=1, max_words=50):
        words = doc["text"].split()
        for _ in range(rng.randint(0, 3)):
            words.insert(rng.randint(0, len(words)), rng.choice(PIECES))
        sep = rng.choice([" "] * 6 + ["\n", "\t", "  "])
        cut = rng.randint(0, len(words))
        out.append((" ".join(words[:cut]) + sep + " ".join(words[cut:])).strip())
    return out


def texts_for(arch: str) -> list[str]:
    texts = parity_texts()
    if arch == "xlm-roberta":
        texts += [s for sents in MULTILINGUAL.values() for s in sents]
    return texts


@pytest.fixture(scope="module", params=ARCHS)
def model(request):
    """(arch, docbeam's classifier, the transformers pipeline) for one checkpoint."""
    path = ner_checkpoint(request.param)
    return request.param, Docbeam(path), Transformers(path)


@pytest.fixture(scope="module")
def short_windows(model):
    arch, docbeam, _ = model
    docs = documents(texts_for(arch))
    return docs, docbeam.windows(docs, embedding_chunker())


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_entities_equal_the_transformers_pipeline(model, short_windows, strategy):
    arch, docbeam, pipe = model
    docs, windows = short_windows
    assert len(docs) >= 100 and all(len(windows[d.doc_id]) == 1 for d in docs)  # one window each: the whole text
    mine = docbeam.entities(windows, strategy)
    theirs = pipe([d.text for d in docs], strategy)
    total = 0
    for doc, ref in zip(docs, theirs):
        got = mine[doc.doc_id]
        assert as_tuples(got) == as_tuples(ref), (arch, strategy, doc.text)
        assert max((abs(a - b) for a, b in zip(scores(got), scores(ref))), default=0) <= TOLERANCE
        assert all(e.text == doc.text[e.start : e.end] for e in got)
        total += len(got)
    # Not vacuous: hundreds of entities, of every type.
    assert total >= 500
    assert {e.label for found in mine.values() for e in found} == {"PER", "ORG", "LOC", "MISC"}


@pytest.fixture(scope="module")
def long_windows(model):
    """Documents of 250-600 words in chunks of 128 tokens; the classifier's windows at its own
    512 tokens (one per chunk) and at 72 (chunks split again): {window: (docs, windows)}."""
    _, docbeam, _ = model
    docs = documents([t for t in varied_texts(200, seed=3) if len(t.split()) >= 250])
    chunker = embedding_chunker(max_seq_len=128)
    out = {n: (docs, docbeam.windows(docs, chunker, max_seq_len=n)) for n in (None, 72)}
    chunks = {
        d.doc_id: len(list(c)) for d, c in chunk_documents(docs, chunker.tokenizer, chunker.frame, chunker.windowing)
    }
    for d in docs:
        assert len(out[None][1][d.doc_id]) == chunks[d.doc_id] > 1  # the chunks' spans
        assert len(out[72][1][d.doc_id]) > chunks[d.doc_id]  # split again
    return out


def test_reference_is_the_pipeline(model, short_windows):
    """The reference's cached outputs give what calling the pipeline gives."""
    _, _, pipe = model
    docs, _ = short_windows
    texts = [d.text for d in docs[:10]]
    for strategy in ("simple", "first"):
        assert pipe(texts, strategy) == [pipe.called(t, strategy) for t in texts]


@pytest.mark.parametrize("strategy", ["first", "simple"])
@pytest.mark.parametrize("ner_window", [None, 72])
def test_long_documents_are_windowed_and_overlaps_resolved_once(model, long_windows, strategy, ner_window):
    """Documents of several chunks; with a 72-token classifier window, chunks split again.
    Equal to the transformers pipeline run on each of docbeam's windows, its entities moved to
    the document and overlaps resolved by the pipeline's own rule for strided windows."""
    arch, docbeam, pipe = model
    docs, windows = long_windows[ner_window]
    mine = docbeam.entities(windows, strategy)
    for doc in docs:
        ws = windows[doc.doc_id]
        ref = pipe.windowed(ws, strategy)
        assert as_tuples(mine[doc.doc_id]) == as_tuples(ref), (arch, strategy, doc.doc_id)
        assert max((abs(a - b) for a, b in zip(scores(mine[doc.doc_id]), scores(ref))), default=0) <= TOLERANCE
        starts = [e.start for e in mine[doc.doc_id]]
        assert starts == sorted(starts) and len(set(starts)) == len(starts)  # one entity per place
