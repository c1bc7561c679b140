"""The pipeline on Turkish, German and Japanese text with an XLM-RoBERTa checkpoint (random
weights, its own SentencePiece-style tokenizer and <s> ... </s>; tests/model/builders.py).

The checks hold whatever window boundaries chunking chooses: every chunk's text is the
slice of the document its offsets name, the chunks cover the text, offsets move forward,
and no boundary falls inside a character sequence (UTF-8 round trip, no chunk starting
with a combining mark)."""

import json
import unicodedata

import numpy as np
import pytest

from tests.helpers import run_job, table, write_jsonl
from tests.model.builders import MULTILINGUAL, checkpoint


@pytest.fixture(scope="module")
def multilingual_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("multilingual")
    model = checkpoint("xlm-roberta", root, pooling="mean", normalize=True)
    docs = []
    for lang, sents in MULTILINGUAL.items():
        sep = "" if lang == "ja" else " "
        docs.append({"id": f"{lang}-short", "text": sents[0]})
        docs.append({"id": f"{lang}-long", "text": sep.join(sents * 3)})  # several windows of 48 tokens
    inputs = write_jsonl(root / "docs.jsonl", docs)
    out = root / "out"
    run_job(inputs, out, "--model", str(model), "--max-seq-len", "48", "--stride", "8")
    return docs, out


@pytest.mark.slow
def test_every_document_and_chunk_is_right_for_each_script(multilingual_run):
    docs, out = multilingual_run
    texts = {d["id"]: d["text"] for d in docs}
    documents = {d["doc_id"]: d for d in table(out, "documents").to_pylist()}
    assert set(documents) == set(texts)
    assert not table(out, "errors") or table(out, "errors").num_rows == 0
    chunks = table(out, "chunks").to_pylist()
    for doc_id, text in texts.items():
        mine = sorted((c for c in chunks if c["doc_id"] == doc_id), key=lambda c: c["chunk_index"])
        assert [c["chunk_index"] for c in mine] == list(range(len(mine))) == list(range(documents[doc_id]["n_chunks"]))
        if doc_id.endswith("long"):
            assert len(mine) >= 3, f"{doc_id}: {len(mine)} chunk(s)"
        covered = np.zeros(len(text), bool)
        for c in mine:
            s, e = c["start_char"], c["end_char"]
            assert 0 <= s < e <= len(text)
            assert c["text"] == text[s:e], f"{doc_id} chunk {c['chunk_index']}: text is not the slice of its offsets"
            assert c["text"].encode("utf-8").decode("utf-8") == c["text"]
            assert unicodedata.combining(text[s]) == 0, f"{doc_id}: chunk starts inside a character sequence"
            assert np.isfinite(c["embedding"]).all() and abs(np.linalg.norm(c["embedding"]) - 1) < 1e-4
            covered[s:e] = True
        starts = [c["start_char"] for c in mine]
        assert starts == sorted(starts), f"{doc_id}: offsets go backwards"
        gaps = [ch for ch, ok in zip(text, covered) if not ok]
        assert all(ch.isspace() for ch in gaps), f"{doc_id}: text not covered by any chunk: {''.join(gaps)!r}"


@pytest.mark.slow
def test_the_manifest_names_the_architecture(multilingual_run):
    _, out = multilingual_run
    m = json.loads((out / "_manifest.json").read_text())
    assert m["model"]["architecture"] == "xlm-roberta" and m["model"]["pooling"] == ["mean"]
    assert m["model"]["dim"] == 64 and m["accounting"]["holds"]
