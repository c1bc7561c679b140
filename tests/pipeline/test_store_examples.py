"""The README's direct client queries, run as they are written (only the paths replaced) in a
child Python against the stores a real run wrote: Milvus Lite (left loaded: a plain `query`
answers without load_collection) and Qdrant's local mode (the vector name the README shows).
Then --vector-dtype in the stores: Qdrant keeps float16 and int8 (as uint8) and answers as
search over the Parquet; Milvus Lite and Qdrant refuse, in one line, what they cannot keep."""

import re
import subprocess
import sys

import numpy as np
import pytest
from qdrant_client import QdrantClient

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.vector_format import dequantize
from docbeam.pipeline.search.run_chunks import open_run
from docbeam.pipeline.stores import query_store
from docbeam.pipeline.stores.base import StoreError, chunk_id
from docbeam.pipeline.stores.qdrant import DENSE
from tests.corpus import build_corpus
from tests.helpers import REPO, child_env, run_job, table, write_jsonl

pytestmark = pytest.mark.slow


def readme_example(name: str) -> str:
    text = (REPO / "README.md").read_text()
    found = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", text, re.S)
    assert found, f"README has no `example: {name}` block"
    return found.group(1)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("examples")
    docs = build_corpus(8, seed=5, min_words=120, max_words=300)
    docs[0]["text"] = "Lemon pasta for two. Boil 200 g of spaghetti in salted water for nine minutes."
    write_jsonl(root / "docs.jsonl", docs)
    return root


def _run_in_a_child(inputs, output, *flags: str) -> None:
    """`docbeam run` in its own process, as a user runs it: Milvus Lite's engine (and its lock on
    the .db) ends with the process, and the example then opens the store as a new client."""
    argv = [sys.executable, "-m", "docbeam.pipeline.run", "--input", str(inputs), "--output", str(output), *flags]
    done = subprocess.run(argv, capture_output=True, text=True, env=child_env(JAX_PLATFORMS="cpu"), timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def _run_example(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=child_env(JAX_PLATFORMS="cpu"), timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_the_readme_milvus_example_runs_on_the_store_a_run_wrote(corpus):
    db = corpus / "chunks.db"
    _run_in_a_child(corpus / "docs.jsonl", corpus / "milvus-run", "--sink", f"milvus://{db}")
    code = readme_example("milvus")
    assert '"/data/chunks.db"' in code and "load_collection" not in code
    lines = _run_example(code.replace('"/data/chunks.db"', repr(str(db))))
    assert len(lines) == 4 and lines[0].split()[1] == "doc-00000"  # the spaghetti chunk first
    assert lines[-1] == "5 documents' first chunks"


def test_the_readme_qdrant_example_runs_with_the_vector_name_docbeam_writes(corpus):
    folder = corpus / "qdrant"
    _run_in_a_child(corpus / "docs.jsonl", corpus / "qdrant-run", "--sink", f"qdrant://{folder}")
    code = readme_example("qdrant")
    assert f'using="{DENSE}"' in code and '"/data/qdrant"' in code
    lines = _run_example(code.replace('"/data/qdrant"', repr(str(folder))))
    assert len(lines) == 3 and lines[0].split()[1] == "doc-00000"


@pytest.mark.parametrize("dtype", ["float16", "int8"])
def test_qdrant_keeps_float16_and_int8_and_answers_as_the_parquet(corpus, dtype):
    folder, out = corpus / f"q-{dtype}", corpus / f"run-{dtype}"
    run_job(corpus / "docs.jsonl", out, "--dims", "128", "--vector-dtype", dtype, "--sink", f"qdrant://{folder}")
    client = QdrantClient(path=str(folder))
    try:
        params = client.get_collection("docbeam_chunks").config.params.vectors[DENSE]
        assert params.size == 128 and params.datatype.value == {"float16": "float16", "int8": "uint8"}[dtype]
        points, _ = client.scroll(
            "docbeam_chunks", limit=1000, with_vectors=True, with_payload=["doc_id", "chunk_index"]
        )
    finally:
        client.close()
    rows = table(out, "chunks").to_pylist()
    stored = {chunk_id(r["doc_id"], r["chunk_index"]): np.asarray(r["embedding"], np.float64) for r in rows}
    shift = 128 if dtype == "int8" else 0
    assert {str(p.id) for p in points} == set(stored)
    for p in points:  # what the store holds is the Parquet's value (int8: + 128, as uint8)
        np.testing.assert_allclose(np.asarray(p.vector[DENSE]), stored[str(p.id)] + shift, rtol=1e-3)
    run = open_run(str(out))
    dense = dequantize(np.stack([np.asarray(r["embedding"]) for r in rows]), dtype, 128, run.ranges)
    ids = [chunk_id(r["doc_id"], r["chunk_index"]) for r in rows]
    for q in dense[[0, 3, 7]] + 0.05:  # near a chunk, not on it
        q = (q / np.linalg.norm(q)).astype(np.float32)
        want = [ids[i] for i in np.argsort(-(dense @ q))[:5]]
        hits = query_store(f"qdrant://{folder}", q, 5, run.vector_format, run.ranges)
        assert [h["chunk_id"] for h in hits] == want
        np.testing.assert_allclose([h["score"] for h in hits], np.sort(dense @ q)[::-1][:5], atol=1e-3)
    if dtype == "int8":  # without the run's format and ranges the codes would rank wrongly: refused
        with pytest.raises(StoreError, match="holds int8 codes"):
            query_store(f"qdrant://{folder}", dense[0].astype(np.float32), 5)


@pytest.mark.parametrize(
    "uri, dtype, says",
    [
        (
            "milvus://{root}/lite.db",
            "int8",
            "Milvus Lite keeps float32 vectors only (--dims works); --vector-dtype int8",
        ),
        ("qdrant://{root}/qb", "binary", "Qdrant keeps float32, float16, int8 vectors, not binary"),
    ],
)
def test_a_store_refuses_a_dtype_it_cannot_keep_before_the_run(corpus, uri, dtype, says):
    with pytest.raises(UsageError, match=re.escape(says)):
        run_job(
            corpus / "docs.jsonl",
            corpus / f"refused-{dtype}",
            "--vector-dtype",
            dtype,
            "--sink",
            uri.format(root=corpus),
        )
    assert not (corpus / f"refused-{dtype}" / "chunks").exists()


OLD_STYLE = """
from pymilvus import DataType, MilvusClient
c = MilvusClient({db!r})
s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=36)
s.add_field("embedding", DataType.FLOAT_VECTOR, dim=8)
for f in ("doc_key", "doc_id", "section", "text"):
    s.add_field(f, DataType.VARCHAR, max_length=100, nullable=f in ("section", "text"))
s.add_field("chunk_index", DataType.INT64)
for f in ("page_start", "page_end"):
    s.add_field(f, DataType.INT32, nullable=True)
s.add_field("metadata", DataType.JSON, nullable=True)
index = c.prepare_index_params()
index.add_index("embedding", index_type="FLAT", metric_type="IP")
c.create_collection("docbeam_chunks", schema=s, index_params=index)
"""
ENSURE = """
from docbeam.pipeline.core.sink_uri import parse
from docbeam.pipeline.stores import store_for
print(store_for(parse("milvus://{db}")).ensure(8))
"""
PLAIN_QUERY = """
from pymilvus import MilvusClient
print(MilvusClient({db!r}).query("docbeam_chunks", filter="chunk_index >= 0", output_fields=["id"], limit=1))
"""


def test_a_lite_collection_an_earlier_docbeam_indexed_is_left_loaded_for_the_next_process(tmp_path):
    db = str(tmp_path / "old.db")
    _run_example(OLD_STYLE.format(db=db))
    with pytest.raises(AssertionError, match="code=101"):  # what a user met: released in a new process
        _run_example(PLAIN_QUERY.format(db=db))
    assert _run_example(ENSURE.format(db=db)) == ["False"]  # existing: not created
    assert _run_example(PLAIN_QUERY.format(db=db))[0].startswith("data: []")  # answers, no load_collection
