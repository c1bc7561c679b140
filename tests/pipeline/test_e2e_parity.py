"""Through the whole pipeline: every chunk's vector is the vector of its own text.

The contract, on a few hundred chunks of short and long documents: sentence-transformers'
`encode(chunk.text)` equals the stored chunk vector (cosine >= 0.9999), and a document that
fits one window has the vector of its text.
"""

import numpy as np
import pytest

from tests.corpus import build_corpus, varied_texts
from tests.helpers import run_job, table, write_jsonl
from tests.reference import cosine, st_encode

pytestmark = pytest.mark.slow


def test_every_chunk_is_the_vector_of_its_text(tmp_path):
    texts = varied_texts(120, seed=11) + [d["text"] for d in build_corpus(12, seed=12, min_words=600, max_words=1500)]
    src = write_jsonl(tmp_path / "texts.jsonl", [{"id": f"t{i}", "text": t} for i, t in enumerate(texts)])
    res = run_job(src, tmp_path / "out")
    assert res.manifest["accounting"]["holds"] and res.manifest["counts"]["ok"] == len(texts)

    docs = {d["doc_id"]: d for d in table(tmp_path / "out", "documents").to_pylist()}
    chunks = table(tmp_path / "out", "chunks").to_pylist()
    assert len(chunks) >= 200 and sum(d["n_chunks"] > 1 for d in docs.values()) >= 12
    for c in chunks:
        assert c["text"] == docs[c["doc_id"]]["text"][c["start_char"] : c["end_char"]]
    cos = cosine(np.asarray([c["embedding"] for c in chunks]), st_encode([c["text"] for c in chunks]))
    worst = int(np.argmin(cos))
    assert cos.min() >= 0.9999, f"chunk {chunks[worst]['doc_id']}#{chunks[worst]['chunk_index']}: {cos.min():.6f}"

    single = [d for d in docs.values() if d["n_chunks"] == 1]
    assert len(single) >= 80
    cos = cosine(np.asarray([d["embedding"] for d in single]), st_encode([d["text"] for d in single]))
    assert cos.min() >= 0.9999, f"document vector of a one-window text: {cos.min():.6f}"
