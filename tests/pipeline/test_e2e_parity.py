"""Through the whole pipeline: chunk and document vectors against sentence-transformers."""

import numpy as np
import pytest

from model.checkpoint import default_checkpoint_dir
from model.tokenizer import load_tokenizer
from pipeline.core.records import Document
from pipeline.ingest.chunking import Windowing, chunk_documents
from tests.corpus import varied_texts
from tests.helpers import run_job, table, write_jsonl
from tests.reference import cosine, st_embed_ids, st_encode

pytestmark = pytest.mark.slow


def test_chunk_and_document_embeddings_match_sentence_transformers(tmp_path):
    texts = varied_texts(200, seed=11)
    src = write_jsonl(tmp_path / "texts.jsonl", [{"id": f"t{i}", "text": t} for i, t in enumerate(texts)])
    res = run_job(src, tmp_path / "out")
    assert res.manifest["accounting"]["holds"] and res.manifest["counts"]["ok"] == 200

    docs = {d["doc_id"]: d for d in table(tmp_path / "out", "documents").to_pylist()}
    chunks = {}
    for c in table(tmp_path / "out", "chunks").to_pylist():
        chunks.setdefault(c["doc_id"], {})[c["chunk_index"]] = c
    single = [i for i in range(200) if docs[f"t{i}"]["n_chunks"] == 1]
    multi = [i for i in range(200) if docs[f"t{i}"]["n_chunks"] > 1]
    assert len(single) >= 150 and len(multi) >= 3

    # Texts that fit one window: chunk and document vectors equal sentence-transformers' encode.
    ref = st_encode([texts[i] for i in single])
    for name, got in (
        ("chunk", [chunks[f"t{i}"][0]["embedding"] for i in single]),
        ("document", [docs[f"t{i}"]["embedding"] for i in single]),
    ):
        cos = cosine(np.asarray(got), ref)
        assert cos.min() >= 0.9999, f"{name}: text t{single[int(np.argmin(cos))]} cosine {cos.min():.6f}"

    # Longer texts: every window equals sentence-transformers' modules on that window's
    # tokens, and the document vector is the token-weighted mean of those reference vectors.
    tok, special = load_tokenizer(default_checkpoint_dir())
    docs_in = [Document(uid=f"t{i}", doc_id=f"t{i}", source="x", row=i, text=texts[i]) for i in multi]
    for doc, segs in chunk_documents(docs_in, tok, special, Windowing(256, 32)):
        segs = list(segs)
        ref = st_embed_ids([s.ids.tolist() for s in segs])
        got = np.asarray([chunks[doc.doc_id][s.index]["embedding"] for s in segs])
        assert cosine(got, ref).min() >= 0.9999, doc.doc_id
        w = np.asarray([s.n_tokens for s in segs], np.float64)
        expect = (ref * w[:, None]).sum(0) / w.sum()
        assert cosine(docs[doc.doc_id]["embedding"], expect)[0] >= 0.9999, doc.doc_id
