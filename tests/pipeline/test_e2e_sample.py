"""The sample job end to end on DirectRunner: real Beam, real model, real Parquet read back."""

import json

import pyarrow as pa
import pytest

from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core.tables import EXTRACTIONS_SCHEMA, chunks_schema, documents_schema
from docbeam.pipeline.io import outputs, storage
from tests.helpers import SAMPLES, table

pytestmark = pytest.mark.slow


def test_schemas_are_the_contract(sample_run):
    out, _ = sample_run
    assert table(out, "documents").schema == documents_schema(384)
    assert table(out, "chunks").schema == chunks_schema(384)
    ex = table(out, "extractions")
    assert ex is None or ex.schema == EXTRACTIONS_SCHEMA


def test_every_format_reads_and_accounting_holds(sample_run):
    out, res = sample_run
    docs = table(out, "documents").to_pylist()
    by_source = {d["source"].rsplit("/", 1)[-1] for d in docs}
    assert by_source == {
        "articles.jsonl",
        "more-articles.jsonl.gz",
        "business.parquet",
        "notes.txt",
        "guide.md",
        "page.html",
    }
    errors = outputs.read_errors(str(out))
    assert sorted(e["error"] for e in errors) == ["invalid_json", "missing_text"]
    assert all(e["source"].endswith("articles.jsonl") and e["stage"] == "parse" for e in errors)
    m = json.loads(storage.read_text(f"{out}/_manifest.json"))
    assert m["accounting"]["holds"] and m["counts"]["read"] == len(docs) + len(errors) == 71
    assert m["counts"]["chunks"] == table(out, "chunks").num_rows
    assert m["attention"]["used"] == "xla_fused" and m["attention"]["used_by_workers"] == ["xla_fused"]
    assert m["attention"]["requested"] == "auto" and "CPU" in m["attention"]["reason"]
    assert m["model"]["weights_sha256"] and m["versions"]["apache-beam"].startswith("2.77")
    assert len({d["doc_id"] for d in docs}) == len(docs)


def test_html_is_its_main_content_under_its_title(sample_run):
    """The default --html-text main: the article of samples/docs/page.html, without its cookie
    banner, navigation, byline, sidebar and footer (--html-text all keeps them: tests/ingest)."""
    out, _ = sample_run
    (page,) = [d for d in table(out, "documents").to_pylist() if d["source"].endswith("page.html")]
    assert page["format"] == "html"
    assert page["text"] == (
        "Batch embeddings at scale\n"
        "Embedding millions of documents is a batch problem: read, tokenize, pack, encode, write. "
        "Each step has its own bottleneck, and the encoder is only one of them.\n"
        "Packing\n"
        "Packing several short documents into one row removes most of the padding a naive batcher feeds the model.\n"
        "Static shapes\n"
        "Static shapes avoid recompiles: every batch has the same number of rows and tokens, "
        "whatever the documents look like."
    )
    (chunk,) = [c for c in table(out, "chunks").to_pylist() if c["doc_id"] == page["doc_id"]]
    assert chunk["section"] == "Batch embeddings at scale"  # the headline, at offset 0 like the page title


def test_long_documents_get_chunks_whose_offsets_cover_the_text(sample_run):
    out, _ = sample_run
    docs = {d["doc_id"]: d for d in table(out, "documents").to_pylist()}
    chunks = table(out, "chunks").to_pylist()
    texts = {
        json.loads(line)["id"]: json.loads(line)["text"]
        for line in (SAMPLES / "articles.jsonl").read_text().splitlines()
        if line.startswith('{"id": "doc-')
    }
    tokenizer, _ = load_tokenizer(default_checkpoint_dir())
    multi = [d for d in docs.values() if d["n_chunks"] > 2 and d["doc_id"] in texts]
    assert multi, "the sample must contain documents longer than one window"
    for d in multi:
        mine = sorted((c for c in chunks if c["doc_id"] == d["doc_id"]), key=lambda c: c["chunk_index"])
        assert [c["chunk_index"] for c in mine] == list(range(d["n_chunks"]))
        text = texts[d["doc_id"]]
        assert d["text"] == text and all(c["text"] == text[c["start_char"] : c["end_char"]] for c in mine)
        assert mine[0]["start_char"] == 0 and mine[-1]["end_char"] == len(text)
        for a, b in zip(mine, mine[1:]):  # no gap in coverage: the next window starts by the next word
            assert a["start_char"] < b["start_char"] and not text[a["end_char"] : b["start_char"]].strip()
        assert d["n_tokens"] == len(tokenizer.encode(text, add_special_tokens=False).ids)


def test_embeddings_are_unit_vectors(sample_run):
    import numpy as np

    out, _ = sample_run
    for name in ("documents", "chunks"):
        emb = table(out, name, ["embedding"]).column("embedding").combine_chunks()
        assert isinstance(emb, pa.FixedSizeListArray)
        vecs = emb.flatten().to_numpy().reshape(-1, 384)
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1, atol=1e-5)


def test_rerun_refuses_to_mix_outputs_unless_overwrite(sample_run):
    from docbeam.pipeline.core.flags import UsageError
    from tests.helpers import run_job

    out, _ = sample_run
    with pytest.raises(UsageError, match="--overwrite"):
        run_job(SAMPLES / "*.md", out)


def test_input_that_matches_nothing_fails_before_the_job(tmp_path):
    from docbeam.pipeline.core.flags import UsageError
    from tests.helpers import run_job

    with pytest.raises(UsageError, match="matches no files: .*nothing-here"):
        run_job(tmp_path / "nothing-here-*.jsonl", tmp_path / "out")
    assert not (tmp_path / "out").exists()
