"""`docbeam.pipeline.embed` and `docbeam embed`: a vector for a text is what the pipeline stored for it."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers import table
from tests.reference import cosine

pytestmark = pytest.mark.slow
DOCBEAM = str(Path(sys.executable).parent / "docbeam")


def test_embed_equals_the_stored_chunk_and_document_vectors(sample_run):
    from docbeam import pipeline

    out, _ = sample_run
    chunks = table(out, "chunks").to_pylist()[::4]
    got = pipeline.embed([c["text"] for c in chunks])
    assert cosine(got, np.asarray([c["embedding"] for c in chunks])).min() >= 0.99999
    long_docs = [d for d in table(out, "documents").to_pylist() if d["n_chunks"] > 1][:5]
    assert long_docs
    got = pipeline.embed([d["text"] for d in long_docs])
    assert cosine(got, np.asarray([d["embedding"] for d in long_docs])).min() >= 0.99999


def test_the_command_prints_json_or_writes_npy(tmp_path, sample_run):
    out, _ = sample_run
    (chunk,) = table(out, "chunks").to_pylist()[:1]
    queries = tmp_path / "q.txt"
    queries.write_text("what is packing?\n\nwhy static shapes?\n")
    res = subprocess.run([DOCBEAM, "embed", chunk["text"], "--input", str(queries)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    vecs = np.asarray(json.loads(res.stdout))
    assert vecs.shape == (3, 384) and cosine(vecs[0], chunk["embedding"])[0] >= 0.99999
    npy = tmp_path / "v.npy"
    res = subprocess.run([DOCBEAM, "embed", "what is packing?", "--out", str(npy)], capture_output=True, text=True)
    assert res.returncode == 0 and np.allclose(np.load(npy)[0], vecs[1], atol=1e-6)
    empty = subprocess.run([DOCBEAM, "embed"], capture_output=True, text=True)
    assert (
        empty.returncode == 2
        and empty.stderr.strip() == "docbeam embed: no text to embed (give TEXT arguments or --input FILE)"
    )


def test_a_checkpoint_with_short_windows_chunks_queries_as_the_pipeline_chunks_documents(tmp_path):
    """Windows under 256 tokens take a smaller default stride (an eighth of the window): a long
    query is chunked exactly as the pipeline chunks a document, so its vector is the document's."""
    import shutil

    from docbeam.model.checkpoint import default_checkpoint_dir
    from docbeam.pipeline.encode.embed import embed
    from tests.helpers import run_job, write_jsonl

    model = tmp_path / "minilm-128"
    shutil.copytree(default_checkpoint_dir(), model)
    config = json.loads((model / "sentence_bert_config.json").read_text())
    (model / "sentence_bert_config.json").write_text(json.dumps({**config, "max_seq_length": 128}))
    text = " ".join(f"Sentence number {i} talks about packing rows of tokens for the encoder." for i in range(40))
    run_job(write_jsonl(tmp_path / "d.jsonl", [{"id": "long", "text": text}]), tmp_path / "out", "--model", str(model))
    (doc,) = table(tmp_path / "out", "documents").to_pylist()
    assert doc["n_chunks"] > 3
    got = embed([text], model=str(model))
    assert cosine(got, np.asarray([doc["embedding"]]))[0] >= 0.99999
