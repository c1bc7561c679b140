"""The retrieval check: the default model finds the labelled answers in the sample run, and with
a checkpoint that has query and document prompts (random weights), search scores with the query
prompt, never the documents' and never none: a prompt or pooling mix-up between queries and
documents fails here."""

import json

import numpy as np
import pytest

from docbeam import pipeline
from docbeam.pipeline.search import search_hits
from docbeam.pipeline.search.query import embed_queries
from docbeam.pipeline.search.run_chunks import open_run
from tests.helpers import SAMPLES, run_job, table
from tests.model.builders import checkpoint
from tests.model.test_architecture_parity import st_vectors
from tests.reference import cosine
from tests.search import quality

pytestmark = pytest.mark.slow
PROMPTS = {"query": "query: ", "passage": "passage: "}


def test_the_default_model_finds_the_labelled_answers(sample_run):
    out, _ = sample_run
    got = quality.recall(str(out))
    # Measured with all-MiniLM-L6-v2 (README): 0.78, 0.96, 1.00 over 27 questions.
    assert got[1] >= 0.7 and got[5] >= 0.9 and got[10] >= 0.95, got


def test_search_scores_with_the_query_prompt_of_a_prompted_checkpoint(tmp_path):
    model = checkpoint("bert", tmp_path, pooling="mean", prompts=PROMPTS)
    out = tmp_path / "out"
    res = run_job([SAMPLES / "notes.txt", SAMPLES / "guide.md", SAMPLES / "page.html"], out, "--model", str(model))
    assert res.manifest["accounting"]["holds"] and res.manifest["model"]["prompt_name"] == "passage"
    query = "what will the pilot try on a TPU next week?"
    as_query = st_vectors(model, [query], prompt_name="query", normalize_embeddings=True)
    as_passage = st_vectors(model, [query], prompt_name="passage", normalize_embeddings=True)
    bare = st_vectors(model, [query], normalize_embeddings=True)
    # The three differ (else this test could not tell a mix-up).
    assert cosine(as_query, as_passage)[0] < 0.999 and cosine(as_query, bare)[0] < 0.999
    # The vector search embeds with: sentence-transformers' query-prompted one, and `docbeam embed`'s.
    used = embed_queries(open_run(str(out)).manifest["model"], [query])
    assert cosine(used, as_query)[0] >= 0.9999
    assert np.array_equal(used, pipeline.embed([query], str(model)))
    # Every hit's score is the cosine of that query vector with the chunk's stored (passage) vector.
    stored = {(c["doc_id"], c["chunk_index"]): np.asarray(c["embedding"]) for c in table(out, "chunks").to_pylist()}
    hits = search_hits(str(out), query, top_k=len(stored))
    assert len(hits) == len(stored)
    for h in hits:
        vec = stored[(h["doc_id"], h["chunk_index"])]
        assert h["score"] == pytest.approx(cosine(as_query, vec)[0], abs=1e-4)
    swapped = [cosine(v, stored[(h["doc_id"], h["chunk_index"])])[0] for v in (as_passage, bare) for h in hits]
    assert max(abs(s - h["score"]) for s, h in zip(swapped, hits * 2)) > 1e-3
    json.dumps(hits)  # plain JSON types
