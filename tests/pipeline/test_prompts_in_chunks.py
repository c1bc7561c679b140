"""A checkpoint with prompts, through the whole pipeline: every window carries the documents'
prompt, offsets still refer to the document text, a chunk's vector is sentence-transformers'
`encode(chunk_text, prompt_name="passage")`, and `embed` gives queries the query prompt."""

import numpy as np
import pytest

from docbeam import pipeline
from tests.corpus import build_corpus
from tests.helpers import run_job, table, write_jsonl
from tests.model.builders import checkpoint
from tests.model.test_architecture_parity import st_vectors
from tests.reference import cosine

pytestmark = pytest.mark.slow
PROMPTS = {"query": "query: ", "passage": "passage: "}


@pytest.mark.parametrize(("arch", "include_prompt"), [("bert", True), ("xlm-roberta", False)])
def test_chunks_carry_the_document_prompt_and_queries_the_query_prompt(tmp_path, arch, include_prompt):
    model = checkpoint(arch, tmp_path, pooling="mean", include_prompt=include_prompt, prompts=PROMPTS)
    docs = [{"id": f"d{i}", "text": d["text"]} for i, d in enumerate(build_corpus(12, seed=31, max_words=500))]
    res = run_job(write_jsonl(tmp_path / "in.jsonl", docs), tmp_path / "out", "--model", str(model))
    assert res.manifest["accounting"]["holds"]
    texts = {d["id"]: d["text"] for d in docs}
    chunks = table(tmp_path / "out", "chunks").to_pylist()
    assert len(chunks) > len(docs)  # several windows per long document: the prompt is in every one
    for c in chunks:
        assert c["text"] == texts[c["doc_id"]][c["start_char"] : c["end_char"]]
    stored = np.asarray([c["embedding"] for c in chunks])
    passage = st_vectors(model, [c["text"] for c in chunks], prompt_name="passage", normalize_embeddings=True)
    assert cosine(stored, passage).min() >= 0.9999
    bare = st_vectors(model, [c["text"] for c in chunks], normalize_embeddings=True)
    assert cosine(stored, bare).min() < 0.999  # the prompt really is there
    # embed: the documents' prompt reproduces a stored chunk; by default queries get theirs
    some = [c["text"] for c in chunks[:6]]
    assert cosine(pipeline.embed(some, str(model), prompt_name="passage"), stored[:6]).min() >= 0.9999
    query = st_vectors(model, some, prompt_name="query", normalize_embeddings=True)
    assert cosine(pipeline.embed(some, str(model)), query).min() >= 0.9999
