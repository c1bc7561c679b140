"""Extractors on hand-checked texts: spans point at the right characters, scores ordered."""

import json

import numpy as np
import pytest

from pipeline.core.records import DocInfo, Document, SegmentVector
from pipeline.extractors import ExtractorError, build
from pipeline.extractors.entities import find_entities
from pipeline.extractors.keyphrases import Keyphrases, candidates, mmr
from pipeline.extractors.labels import load_labels
from pipeline.extractors.summary import sentences

INVOICE = (
    "Invoice #1042 from Northwind Traders. Amount due: $1,250.00 by 2026-01-15. Questions? Write to "
    "billing@northwind.example or call +1 (415) 555-0134. Pay online at https://pay.northwind.example/i/1042."
)


def doc_info(**counts) -> DocInfo:
    return DocInfo(uid="u", doc_id="d", source="s", row=0, **counts)


def test_entities_types_values_and_spans():
    found = find_entities(
        INVOICE + " Meeting on March 3, 2026 and 14 October 2025; budget EUR 4,000 or 12 million francs."
    )
    got = [(k, v) for k, v, _, _ in found]
    assert got == [
        ("money", "$1,250.00"),
        ("date", "2026-01-15"),
        ("email", "billing@northwind.example"),
        ("phone", "+1 (415) 555-0134"),
        ("url", "https://pay.northwind.example/i/1042"),
        ("date", "March 3, 2026"),
        ("date", "14 October 2025"),
        ("money", "EUR 4,000"),
        ("money", "12 million francs"),
    ]
    text = INVOICE + " Meeting on March 3, 2026 and 14 October 2025; budget EUR 4,000 or 12 million francs."
    assert all(text[s:e] == v for _, v, s, e in found)


def test_entities_do_not_fire_on_plain_numbers():
    assert find_entities("Version 3.11 has 42 new features and runs 2x faster in 2026.") == []


def test_keyphrase_candidates_follow_countvectorizer():
    from sklearn.feature_extraction.text import CountVectorizer

    text = "The quick brown fox jumps over the lazy dog; the dog sleeps. Foxes are quick!"
    ours = candidates(text, (1, 2))
    cv = CountVectorizer(ngram_range=(1, 2), stop_words="english").fit([text])
    assert list(ours) == list(cv.get_feature_names_out())
    s, e, n = ours["lazy dog"]
    assert text[s:e] == "lazy dog" and n == 1
    s, e, _ = ours["jumps lazy"]  # n-grams skip removed stop words, as sklearn's do
    assert text[s:e] == "jumps over the lazy"
    assert ours["quick"][2] == 2 and text[ours["quick"][0] : ours["quick"][1]] == "quick"


def test_mmr_matches_keybert():
    from keybert._mmr import mmr as keybert_mmr

    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((40, 16))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    doc = vecs[:10].mean(0)
    doc /= np.linalg.norm(doc)
    words = [f"w{i}" for i in range(40)]
    theirs = [w for w, _ in keybert_mmr(doc[None], vecs, words, top_n=5, diversity=0.5)]
    ours = [words[i] for i in mmr(doc, vecs, 5, 0.5)]
    assert sorted(ours) == sorted(theirs)


def _vectors(kind, texts_spans, vecs):
    return [
        SegmentVector(
            uid="u",
            doc_id="d",
            kind=kind,
            index=i,
            start_char=s,
            end_char=e,
            n_tokens=5,
            vector=v,
            attention="native",
            text=t,
        )
        for i, ((t, s, e), v) in enumerate(zip(texts_spans, vecs))
    ]


def test_keyphrase_rows_are_ordered_by_score_with_spans():
    doc_vec = np.array([1.0, 0, 0])
    vecs = [np.array(v) / np.linalg.norm(v) for v in ([1, 0.1, 0], [0.2, 1, 0], [0.9, 0.3, 0.1], [0, 0, 1])]
    vs = _vectors("keyphrases", [("alpha", 0, 5), ("beta", 6, 10), ("gamma", 11, 16), ("delta", 17, 22)], vecs)
    rows = Keyphrases(top_n=3).extract(
        doc_info(n_chars=22, n_tokens=5, n_chunks=1, n_segments=5), doc_vec, vs, [], [doc_vec]
    )
    assert [r["kind"] for r in rows] == ["keyphrase"] * 3
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert rows[0]["value"] == "alpha" and (rows[0]["start_char"], rows[0]["end_char"]) == (0, 5)


def test_sentences_spans():
    text = 'First sentence here. "Quoted start" follows! Is it 3 p.m.? Yes.\nA new line starts here\n\nAnd another one.'
    spans = sentences(text)
    got = [text[s:e] for s, e in spans]
    assert got == [
        "First sentence here.",
        '"Quoted start" follows!',
        "Is it 3 p.m.?",
        "A new line starts here",
        "And another one.",
    ]


def test_no_sentences_and_no_candidates_yield_no_rows():
    from pipeline.extractors.summary import Summary

    info = doc_info(n_chars=2, n_tokens=1, n_chunks=1, n_segments=1)
    assert Summary().extract(info, np.ones(3) / np.sqrt(3), [], [], []) == []
    assert Keyphrases().extract(info, np.ones(3) / np.sqrt(3), [], [], []) == []
    assert sentences("ok") == [] and candidates("a an the of") == {}
    doc = Document(uid="u", doc_id="d", source="s", row=0, text="the of and")
    assert Keyphrases().candidates(doc, None, None, 256) == []


def test_label_files_bad_and_good(tmp_path):
    good = tmp_path / "l.json"
    good.write_text(json.dumps({"cats": "pictures of cats", "dogs": ["dog photos", "puppies"]}))
    assert load_labels(good) == {"cats": ["pictures of cats"], "dogs": ["dog photos", "puppies"]}
    yml = tmp_path / "l.yaml"
    yml.write_text("cats: pictures of cats\n")
    assert load_labels(yml) == {"cats": ["pictures of cats"]}
    for name, body, msg in [
        ("a.json", "{not json", "does not parse"),
        ("b.yaml", "", "non-empty mapping"),
        ("c.json", "[1, 2]", "non-empty mapping"),
        ("d.yaml", "x: []", "needs a description"),
        ("e.yaml", "x: {a: 1}", "needs a description"),
    ]:
        (tmp_path / name).write_text(body)
        with pytest.raises(ExtractorError, match=msg):
            load_labels(tmp_path / name)
    with pytest.raises(ExtractorError, match="cannot read"):
        load_labels(tmp_path / "missing.yaml")


def test_default_labels_load_and_build_rejects_unknown():
    assert len(load_labels(None)) >= 10
    with pytest.raises(ExtractorError, match="unknown extractor"):
        build(["sentiment"])


def test_entities_scale_linearly():
    import time

    text = "Paid on 2026-01-15 and 2026-02-15, invoice $12.50. " * 10_000  # 30,000 matches
    t0 = time.perf_counter()
    found = find_entities(text)
    assert len(found) == 30_000 and time.perf_counter() - t0 < 5
