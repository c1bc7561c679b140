"""`docbeam search` on a real run's output (the sample job): the same top chunks as a brute-force
numpy search over the whole table, local and gs://, and refused when the model is not the run's."""

import json
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam import pipeline
from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.pipeline import cli
from docbeam.pipeline.search import HIT_KEYS, search_hits
from docbeam.pipeline.search.query import embed_queries
from docbeam.pipeline.search.run_chunks import embedding_blocks, open_run
from tests.helpers import rss_growth, table

pytestmark = pytest.mark.slow
QUERIES = [
    "my tablet arrived with a cracked screen",
    "how long do I boil the spaghetti?",
    "what does an irrefutable pattern mean in a match statement?",
    "Wie viel kostet der Pilot?",
]


def brute_force(out, query_vector: np.ndarray, k: int) -> list[tuple[str, int, float]]:
    rows = table(out, "chunks").to_pylist()
    x = np.asarray([r["embedding"] for r in rows], np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = query_vector / np.linalg.norm(query_vector)
    scores = x @ q
    order = np.argsort(-scores, kind="stable")[:k]
    return [(rows[i]["doc_id"], rows[i]["chunk_index"], float(scores[i])) for i in order]


def run_search(capsys, *argv: str) -> tuple[int, str, str]:
    status = cli.main(["search", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_top_k_equals_a_brute_force_search_of_the_whole_table(sample_run):
    out, _ = sample_run
    manifest_model = open_run(str(out)).manifest["model"]
    vectors = embed_queries(manifest_model, QUERIES)
    # The query is embedded exactly as `docbeam embed` / pipeline.embed embeds it.
    assert np.array_equal(vectors, pipeline.embed(QUERIES))
    for query, vector in zip(QUERIES, vectors):
        hits = search_hits(str(out), query, top_k=10)
        want = brute_force(out, vector, 10)
        assert [(h["doc_id"], h["chunk_index"]) for h in hits] == [w[:2] for w in want]
        assert np.allclose([h["score"] for h in hits], [w[2] for w in want], atol=1e-5)
    first = {q: search_hits(str(out), q, top_k=1)[0]["doc_id"] for q in QUERIES[:2]}
    assert first == {QUERIES[0]: "support-ticket", QUERIES[1]: "recipe"}


def test_the_json_shape_and_the_console_listing(sample_run, capsys):
    out, _ = sample_run
    status, stdout, _ = run_search(capsys, str(out), QUERIES[0], "--top-k", "3", "--json")
    assert status == 0
    data = json.loads(stdout)
    assert set(data) == {"run", "query", "model", "method", "hits"} and data["method"] == "exact"
    assert data["model"] == "sentence-transformers/all-MiniLM-L6-v2" and data["query"] == QUERIES[0]
    assert [list(h) for h in data["hits"]] == [list(HIT_KEYS)] * 3
    assert [h["rank"] for h in data["hits"]] == [1, 2, 3] and data["hits"][0]["doc_id"] == "support-ticket"
    assert data["hits"] == search_hits(str(out), QUERIES[0], top_k=3)  # what the sinks' search is compared with
    chunk = data["hits"][0]
    assert chunk["text"].startswith("Hi, my order 88123 arrived damaged")
    status, stdout, _ = run_search(capsys, str(out), QUERIES[0], "--top-k", "2")
    lines = stdout.splitlines()
    assert status == 0 and lines[0].startswith("2 of 232 chunks of") and "exact" in lines[0]
    assert lines[1].startswith("  1. 0.7") and "support-ticket" in lines[1]
    assert lines[2].strip().startswith("Hi, my order 88123")
    status, _, err = run_search(capsys, str(out), "x", "--top-k", "0")
    assert status == 2 and "--top-k" in err


def test_gcs_run_gives_the_local_answer(sample_run, gcs_emulator):
    out, _ = sample_run
    bucket = gcs_emulator.create_bucket()
    gcs_emulator.upload_dir(out, f"gs://{bucket}/run")
    assert search_hits(f"gs://{bucket}/run", QUERIES[2], top_k=5) == search_hits(str(out), QUERIES[2], top_k=5)


def copy_run(out, dest, *, manifest=None, chunks=None):
    """A copy of the run's manifest and chunks (what search reads), edited."""
    (dest / "chunks").mkdir(parents=True)
    data = json.loads((out / "_manifest.json").read_text())
    (dest / "_manifest.json").write_text(json.dumps(manifest(data) if manifest else data))
    for f in (out / "chunks").glob("*.parquet"):
        t = pq.read_table(f)
        pq.write_table(chunks(t) if chunks else t, dest / "chunks" / f.name)
    return dest


def test_a_model_that_is_not_the_runs_is_refused_naming_it(sample_run, tmp_path, capsys):
    out, _ = sample_run
    changed = tmp_path / "minilm-changed"
    shutil.copytree(default_checkpoint_dir(), changed)
    cfg = json.loads((changed / "tokenizer_config.json").read_text())
    (changed / "tokenizer_config.json").write_text(json.dumps({**cfg, "model_max_length": 128}))
    status, stdout, err = run_search(capsys, str(out), "a question", "--model", str(changed))
    assert status == 2 and not stdout
    assert err.startswith("docbeam search: the run's model sentence-transformers/all-MiniLM-L6-v2 (--model ")
    assert "tokenizer_config.json has sha256" in err and err.count("\n") == 1
    # An unchanged copy is the run's model: accepted.
    same = tmp_path / "minilm-copy"
    shutil.copytree(default_checkpoint_dir(), same)
    assert run_search(capsys, str(out), QUERIES[0], "--model", str(same), "--top-k", "1")[0] == 0
    # A run whose checkpoint is gone: refused, naming it.
    gone = copy_run(
        out,
        tmp_path / "gone",
        manifest=lambda m: {**m, "model": {**m["model"], "name": "/models/e5", "path": "/models/e5", "source": {}}},
    )
    status, _, err = run_search(capsys, str(gone), "a question")
    assert status == 2 and err.startswith("docbeam search: the run's model /models/e5 cannot be loaded here: ")
    status, _, err = run_search(capsys, str(tmp_path / "nothing"), "a question")
    assert status == 2 and "no _manifest.json" in err


def test_a_run_without_text_says_so(sample_run, tmp_path, capsys):
    out, _ = sample_run

    def drop_text(t: pa.Table) -> pa.Table:
        i = t.schema.get_field_index("text")
        return t.set_column(i, "text", pa.nulls(len(t), pa.string()))

    bare = copy_run(out, tmp_path / "bare", chunks=drop_text)
    status, stdout, _ = run_search(capsys, str(bare), QUERIES[0], "--top-k", "1")
    assert status == 0 and "support-ticket" in stdout and "--no-store-text" in stdout


def test_embeddings_stream_in_blocks_never_the_whole_table(tmp_path):
    """120,000 chunks (176 MiB of vectors) in row groups of 4,096: reading them holds about a row
    group at a time (pyarrow's pre-buffering kept them all: 200 MiB)."""
    n, dim = 120_000, 384
    (tmp_path / "chunks").mkdir()
    rng = np.random.default_rng(0)
    manifest = {"run_id": "r", "model": {"dim": dim}}
    (tmp_path / "_manifest.json").write_text(json.dumps(manifest))
    with pq.ParquetWriter(tmp_path / "chunks" / "part-00000-of-00001.parquet", _schema(dim)) as w:
        for start in range(0, n, 4096):
            m = min(4096, n - start)
            flat = pa.array(rng.normal(size=m * dim).astype(np.float32))
            w.write_table(
                pa.table({"embedding": pa.FixedSizeListArray.from_arrays(flat, dim)}, schema=_schema(dim)),
                row_group_size=4096,
            )
    chunks = open_run(str(tmp_path))
    total = 0
    with rss_growth() as peak:
        for first, block in embedding_blocks(chunks):
            assert first == total and len(block) <= 8192  # BLOCK_ROWS
            total += len(block)
    assert total == n
    assert peak[0] < 60 * 2**20, f"{peak[0] / 2**20:.0f} MiB for a 176 MiB table"


def _schema(dim: int) -> pa.Schema:
    return pa.schema([("embedding", pa.list_(pa.float32(), dim))])


def test_the_console_command_exits_at_once_with_its_answer_flushed(sample_run):
    """`docbeam search` leaves through `cli.script`, which ends the process right after the
    answer (a native pool's shutdown aborted ~4 runs in 10 in a fresh install): the whole JSON
    answer still arrives and the status is 0."""
    import subprocess
    import sys
    import tomllib

    from tests.helpers import REPO

    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["docbeam"] == "docbeam.pipeline.cli:script"
    code = "import sys; from docbeam.pipeline.cli import script; sys.argv[0] = 'docbeam'; script()"
    argv = ["search", str(sample_run[0]), QUERIES[1], "--top-k", "2", "--json"]
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hits"][0]["doc_id"] == "recipe"
