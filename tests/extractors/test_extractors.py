"""Extractors on hand-checked texts: spans point at the right characters, scores ordered."""

import json

import numpy as np
import pytest

from docbeam.pipeline.core.records import DocInfo, Document, SegmentVector
from docbeam.pipeline.extractors import ExtractorError, build
from docbeam.pipeline.extractors.keyphrases import Keyphrases, candidates, mmr
from docbeam.pipeline.extractors.labels import Labels, load_labels
from docbeam.pipeline.extractors.patterns import find_entities
from docbeam.pipeline.extractors.prose import prose_sentences
from docbeam.pipeline.extractors.summary import Summary
from docbeam.pipeline.ingest.sentences import sentences

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


def test_keyphrase_candidates_are_countvectorizer_words_in_runs():
    """CountVectorizer's words and lower-casing, but n-grams only inside runs of words with no
    stop word or punctuation between them, so every candidate is text of the document."""
    from sklearn.feature_extraction.text import CountVectorizer

    text = "The quick brown Fox jumps over the lazy dog; the dog sleeps. Foxes are quick! Dogs sleep."
    ours = candidates(text, (1, 2))
    vocab = set(CountVectorizer(ngram_range=(1, 2), stop_words="english").fit([text]).get_feature_names_out())
    assert set(ours) < vocab
    assert [p for p in ours if " " not in p] == sorted(p for p in vocab if " " not in p)  # the same words
    assert "sleeps foxes" not in ours and "quick dogs" not in ours  # would cross a sentence boundary
    assert "jumps lazy" not in ours and "dog dog" not in ours  # would skip "over the" and "; the"
    c = ours["lazy dog"]
    assert text[c.start : c.end] == c.value == "lazy dog" and c.count == 1
    assert ours["quick"].count == 2 and text[ours["quick"].start : ours["quick"].end] == "quick"
    assert ours["brown fox"].value == "brown Fox"  # the document's casing
    assert list(ours) == sorted(ours)


def test_keyphrase_candidates_do_not_cross_sentences_and_keep_first_casing():
    text = "Officials met Emmanuel Macron. The company said it would invest. Later the COMPANY grew, said Dr. Smith."
    found = candidates(text)
    assert "macron company" not in found and "invest later" not in found
    assert found["emmanuel macron"].value == "Emmanuel Macron"
    assert found["company"].value == "company" and found["company"].count == 2  # first occurrence wins
    # "Dr." is no sentence end, but a full stop and a space end a run all the same (a segmenter's
    # miss would otherwise join two sentences): `Dr` and `Smith`, never `Dr Smith`.
    assert "dr smith" not in found and found["smith"].value == "Smith"
    assert [s for s in sentences(text) if text[s.start : s.end].endswith("Dr. Smith.")]


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


def test_summary_sentences_are_prose_only():
    text = (
        "json.dumps(obj) -> str\n\n"
        "    Serialize obj to a JSON formatted str. Dr. Smith wrote this function in\n"
        "    the spring of 2009.\n\n"
        "    >>> json.dumps([1, 2, 3])\n"
        "    '[1, 2, 3]'\n"
        "    >>> json.dumps({'a': 1},\n"
        "    ...            indent=2)\n\n"
        "    Traceback (most recent call last):\n"
        '      File "<stdin>", line 1, in <module>\n'
        "    TypeError: Object of type set is not JSON serializable\n\n"
        "## Install it\n"
        "$ pip install simplejson\n\n"
        "```\nx = compute(1, 2). Not a sentence either.\n```\n"
        "If indent is a non-negative integer, array elements are pretty-printed."
    )
    got = [text[s:e] for s, e in prose_sentences(text)]
    assert got == [
        "Serialize obj to a JSON formatted str.",
        "Dr. Smith wrote this function in\n    the spring of 2009.",  # "Dr." and the hard wrap
        "If indent is a non-negative integer, array elements are pretty-printed.",
    ]


def test_summary_picks_central_prose_sentences_in_order():
    info = doc_info(n_chars=100, n_tokens=20, n_chunks=1, n_segments=4)
    doc_vec = np.array([1.0, 0, 0])
    vecs = [np.array(v) / np.linalg.norm(v) for v in ([0.2, 1, 0], [1, 0.1, 0], [0.9, 0.3, 0.1], [0, 0, 1])]
    vs = _vectors("summary", [("a b c", 0, 5), ("d e f", 6, 11), ("g h i", 12, 17), ("j k l", 18, 23)], vecs)
    rows = Summary(top_k=2).extract(info, doc_vec, vs, [], [doc_vec])
    assert [r["value"] for r in rows] == ["d e f", "g h i"]  # the two closest, in document order


def test_no_sentences_and_no_candidates_yield_no_rows():
    from docbeam.pipeline.extractors.summary import Summary

    info = doc_info(n_chars=2, n_tokens=1, n_chunks=1, n_segments=1)
    assert Summary().extract(info, np.ones(3) / np.sqrt(3), [], [], []) == []
    assert Keyphrases().extract(info, np.ones(3) / np.sqrt(3), [], [], []) == []
    assert prose_sentences("") == [] and candidates("a an the of") == {}
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


def test_the_registry_is_the_flags_list_of_extractors():
    """core.choices names the extractors for the flags (before this package loads);
    extractors.REGISTRY imports them: the same names in the same order, each its own module's class."""
    from docbeam.pipeline.core import choices
    from docbeam.pipeline.extractors import REGISTRY

    assert list(REGISTRY) == list(choices.EXTRACTORS)
    for kind, cls in REGISTRY.items():
        assert cls.__module__ == f"docbeam.pipeline.extractors.{kind}"  # one module per extractor, named for it


def test_entities_scale_linearly():
    import time

    text = "Paid on 2026-01-15 and 2026-02-15, invoice $12.50. " * 10_000  # 30,000 matches
    t0 = time.perf_counter()
    found = find_entities(text)
    assert len(found) == 30_000 and time.perf_counter() - t0 < 5


def _label_shared(labels: dict[str, list[str]], vectors: dict[str, np.ndarray]) -> list[SegmentVector]:
    """Shared segments as the encoder would return them: one per name/description, text = label;
    a description's vector is `vectors[description]` where given, else its label's."""
    pairs = [(label, d) for label, descs in labels.items() for d in [label, *descs]]
    return [
        SegmentVector(
            uid="__shared__",
            doc_id="__shared__",
            kind="labels",
            index=i,
            start_char=0,
            end_char=0,
            n_tokens=3,
            vector=np.asarray(vectors.get(d, vectors[label]), np.float32),
            attention="native",
            text=label,
        )
        for i, (label, d) in enumerate(pairs)
    ]


@pytest.mark.parametrize(
    "min_score, top_k, expected",
    [
        (-1.0, 1, ["cats"]),
        (-1.0, 2, ["cats", "dogs"]),
        (-1.0, 5, ["cats", "dogs", "fish"]),
        (0.5, 3, ["cats", "dogs"]),
        (0.99, 3, []),  # below the floor: no label row at all
    ],
)
def test_labels_top_k_and_min_score(tmp_path, min_score, top_k, expected):
    labels = {"cats": ["pictures of cats"], "dogs": ["dog photos"], "fish": ["aquariums"]}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    vectors = {"cats": np.array([1.0, 0, 0]), "dogs": np.array([0.6, 0.8, 0]), "fish": np.array([0, 0, 1.0])}
    doc = np.array([0.9, 0.3, 0.1])
    doc /= np.linalg.norm(doc)
    ex = Labels(str(path), min_score=min_score, top_k=top_k)
    rows = ex.extract(
        doc_info(n_chars=1, n_tokens=1, n_chunks=1, n_segments=1), doc, [], _label_shared(labels, vectors), []
    )
    assert [r["value"] for r in rows] == expected
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    assert all(r["score"] >= min_score for r in rows)


def test_a_label_scores_its_nearest_description_not_their_mean(tmp_path):
    """A label that covers several kinds of documents (manuals, man pages, READMEs) describes each
    kind apart: a document like one of them gets that label, though the descriptions' mean is far
    from it. With the mean (labels version 1) the label with one kind won here (0.7 to 0.577)."""
    labels = {"docs": ["a manual", "a man page"], "mail": ["a letter"]}
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    vectors = {
        "docs": np.array([0, 0, 1.0, 0]),
        "a manual": np.array([1.0, 0, 0, 0]),
        "a man page": np.array([0, 1.0, 0, 0]),
    }
    vectors |= {"mail": np.array([0.7, 0, 0, 0.71414])}  # its name and its one description alike
    shared = _label_shared(labels, vectors)
    doc = np.array([1.0, 0, 0, 0])  # a manual
    rows = Labels(str(path), min_score=-1, top_k=2).extract(
        doc_info(n_chars=1, n_tokens=1, n_chunks=1, n_segments=1), doc, [], shared, []
    )
    assert [(r["value"], round(r["score"], 3)) for r in rows] == [("docs", 1.0), ("mail", 0.7)]


def test_extractor_settings_are_checked():
    with pytest.raises(ValueError, match="top-k"):
        Labels(None, top_k=0)
    with pytest.raises(ValueError, match="min-score"):
        Labels(None, min_score=1.5)
    with pytest.raises(ValueError, match="top-n"):
        Keyphrases(top_n=0)
    (ex,) = build(["keyphrases"], {"keyphrases": {"top_n": 2}})
    assert ex.top_n == 2


def test_flags_reach_the_extractors(tmp_path):
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.core.flags import LABEL_MIN_SCORE
    from docbeam.pipeline.launch.planning.planner import make_plan
    from tests.helpers import SAMPLES

    def plan(*flags):
        argv = ["--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path), *flags]
        return {ex.name: ex for ex in make_plan(PipelineOptions(argv)).extractors}

    exs = plan("--extract", "keyphrases,summary,labels")
    assert (exs["keyphrases"].top_n, exs["labels"].top_k, exs["labels"].min_score) == (5, 1, LABEL_MIN_SCORE)
    exs = plan(
        "--extract", "keyphrases,summary,labels", "--keyphrase-top-n", "7", "--label-top-k", "2",
        "--label-min-score", "-0.5", "--language", "auto",
    )  # fmt: skip
    assert (exs["keyphrases"].top_n, exs["labels"].top_k, exs["labels"].min_score) == (7, 2, -0.5)


def test_first_window_reference_is_the_document_truncated_at_the_window():
    """KeyBERT ranks against the document cut at the model's window, not against the first
    chunk (which ends at a sentence boundary before it): a reference segment carries that text."""
    from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
    from docbeam.pipeline.extractors.keyphrases import REFERENCE
    from docbeam.pipeline.ingest.chunking import encode_short

    ckpt = describe_checkpoint(default_checkpoint_dir())
    text = " ".join(f"Sentence {i} talks about river boats and mountain trains." for i in range(80))
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text)
    kp = Keyphrases(reference="first-window")
    segs = kp.candidates(doc, ckpt.tokenizer, ckpt.special, 256)
    (ref,) = [s for s in segs if s.index == REFERENCE]
    assert ref.ids.tolist() == encode_short([text], ckpt.tokenizer, ckpt.special, 256)[0].tolist()
    assert len(ref.ids) == 256  # truncated, as sentence-transformers truncates
    assert not [s for s in Keyphrases().candidates(doc, ckpt.tokenizer, ckpt.special, 256) if s.index == REFERENCE]

    rng = np.random.default_rng(4)
    cands = [s for s in segs if s.index != REFERENCE]
    vecs = rng.standard_normal((len(cands), 8))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)

    def sv(seg, v):
        return SegmentVector(
            uid="u",
            doc_id="d",
            kind=seg.kind,
            index=seg.index,
            start_char=seg.start_char,
            end_char=seg.end_char,
            n_tokens=len(seg.ids),
            vector=v,
            attention="x",
            text=seg.text,
        )

    vectors = [sv(s, v) for s, v in zip(cands, vecs)] + [sv(ref, vecs[3])]  # the reference points at one phrase
    rows = kp.extract(
        doc_info(n_chars=1, n_tokens=1, n_chunks=1, n_segments=1), -vecs[3], vectors, [], [-vecs[3]]
    )  # document and first chunk point away from it
    assert rows[0]["value"] == cands[3].text and rows[0]["score"] == pytest.approx(1.0)


def test_an_extractor_whose_rows_change_reruns_on_reuse(tmp_path, monkeypatch):
    """Its version is in the settings fingerprint: raising it reruns that extractor alone."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.core import fingerprint
    from docbeam.pipeline.extractors.summary import Summary
    from docbeam.pipeline.launch.planning.planner import make_plan
    from tests.helpers import SAMPLES

    def settings():
        argv = ["--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path), "--extract", "summary,entities"]
        return make_plan(PipelineOptions(argv)).settings

    before = settings()
    assert before["extractors"]["summary"]["version"] == Summary.version
    monkeypatch.setattr(Summary, "version", Summary.version + 1)
    after = settings()
    assert fingerprint.extractor_kinds_changed(before, after) == ["summary"]
    assert fingerprint.vectors_part(before) == fingerprint.vectors_part(after)
    # the data it reads is in the fingerprint too: a new stop-word list or CLDR release reruns it
    from importlib import metadata

    assert before["extractors"]["entities"]["data"] == {"babel": metadata.version("babel")}
    assert before["sentence_rules"] == f"sentencex {metadata.version('sentencex')}"


def test_a_user_at_host_prompt_is_console_and_a_line_of_at_signs_is_linear():
    from docbeam.pipeline.extractors.prose import PROMPT, code_lines

    text = "root@box:~/src# make install\nInstalled everything.\n\nThe build is done now."
    assert code_lines(text)[0] == (0, text.index("\n\n") + 1)  # prompt and its output
    assert PROMPT.match("me@host:/tmp$ ls") and not PROMPT.match("mail me@host: now")
    # 'a@:' * 2000 backtracked for about a minute in the old pattern; linear now (a child process,
    # so a regression fails at its timeout instead of hanging the suite)
    import subprocess
    import sys

    code = "from docbeam.pipeline.extractors.prose import PROMPT; print(PROMPT.match('a@:' * 20_000))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30).stdout == "None\n"


def test_keyphrase_candidates_sent_to_the_encoder_are_phrases_and_the_rarest_words():
    """Encoding every single word cost more than the chunks themselves (issue 27): longer
    phrases all ride the pass, single words only the `max_unigrams` the tokenizer splits most."""
    from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
    from tests.corpus import build_corpus

    ckpt = describe_checkpoint(default_checkpoint_dir())
    text = build_corpus(1, seed=3, min_words=300, max_words=300)[0]["text"]
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text)
    found = candidates(text)
    sent = {(s.start_char, s.end_char) for s in Keyphrases().candidates(doc, ckpt.tokenizer, ckpt.special, 256)}
    words = [p for p in found if " " not in p]
    kept = [p for p in words if (found[p].start, found[p].end) in sent]
    assert len(words) > 30 and len(kept) == 30
    assert all((found[p].start, found[p].end) in sent for p in found if " " in p)

    def pieces(word):
        return len(ckpt.tokenizer.encode(word, add_special_tokens=False).ids)

    assert min(pieces(p) for p in kept) >= max(pieces(p) for p in words if p not in kept)
    assert len(Keyphrases(ngrams=(1, 1)).candidates(doc, ckpt.tokenizer, ckpt.special, 256)) == len(words)
