"""`docbeam index RUN` and its use by search: the IVF index against exact search on clustered
vectors, on a real run's chunks (local and gs://), the size threshold, and a stale index ignored."""

import json
import shutil

import numpy as np
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline import cli
from docbeam.pipeline.launch.running.run_folder import owned
from docbeam.pipeline.search import hits as hits_mod
from docbeam.pipeline.search import index as ivf
from docbeam.pipeline.search import index_files, search_hits
from docbeam.pipeline.search.run_chunks import open_run
from docbeam.pipeline.search.topk import exact_topk
from tests.benchmarks.search_index import clustered, recall

QUERY = "how long do I boil the spaghetti?"


def test_ivf_recall_against_exact_on_clustered_vectors():
    x, q = clustered(20_000, seed=1)
    _, truth = exact_topk(q, ivf.iter_rows(x), 10)
    index = ivf.build_ivf(lambda: ivf.iter_rows(x, 3000), len(x), x.shape[1])
    assert index.ntotal == len(x) and index.nlist == ivf.n_lists(len(x)) == 566
    _, rows = ivf.search_ivf(index, q, 10)
    assert recall(rows, truth) >= 0.9
    _, rows = ivf.search_ivf(index, q, 10, nprobe=index.nlist)  # every list: exact
    assert recall(rows, truth) == 1.0


def test_tiny_inputs_get_at_most_one_list_per_row():
    assert [ivf.n_lists(n) for n in (1, 5, 100, 10_000, 10**7)] == [1, 5, 40, 400, 1024]
    x = np.eye(5, 8, dtype=np.float32)
    scores, rows = ivf.search_ivf(ivf.build_ivf(lambda: ivf.iter_rows(x), 5, 8), x[:1], 10)
    assert sorted(rows[0][:5].tolist()) == [0, 1, 2, 3, 4] and rows[0][5:].tolist() == [-1] * 5
    assert rows[0][0] == 0 and scores[0][0] == pytest.approx(1.0)


def test_overwrite_deletes_an_index_with_the_run(tmp_path):
    from docbeam.pipeline.core.tables import INDEX_FILES
    from docbeam.pipeline.launch.running import run_folder

    out = str(tmp_path / "run")
    run_folder.mark(out)
    (tmp_path / "run" / "_index").mkdir()
    for name in INDEX_FILES:
        (tmp_path / "run" / "_index" / name).write_text("x")
    old = run_folder.check_output(out, overwrite=True, resume=False)
    assert {f"{out}/_index/{name}" for name in INDEX_FILES} <= set(old)
    run_folder.check_can_delete(out, old, "--overwrite")  # docbeam's own files: no refusal


@pytest.fixture
def run_copy(sample_run, tmp_path):
    out, _ = sample_run
    return shutil.copytree(out, tmp_path / "run")


def search_json(capsys, *argv: str) -> tuple[dict, str]:
    assert cli.main(["search", *argv, "--json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


@pytest.mark.slow
def test_index_is_used_past_the_threshold_and_gives_the_exact_hits(run_copy, capsys, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(hits_mod, "INDEX_FROM_ROWS", 100)
        data, err = search_json(capsys, str(run_copy), QUERY, "--top-k", "5")
        assert data["method"] == "exact" and err.strip() == (
            f"docbeam search: {run_copy} has 232 chunks and no index (`docbeam index {run_copy}` builds one); "
            "searching exactly"
        )
    assert cli.main(["index", str(run_copy)]) == 0
    said = capsys.readouterr().out
    assert "index of 232 chunks (faiss IVF-Flat, 61 lists" in said and "uses it from 50,000 chunks on" in said
    assert all(owned(f"_index/{name}") for name in ("chunks.faiss", "index.json")) and not owned("_index/x")
    # 232 chunks: far below the threshold, so exact, index or not.
    data, _ = search_json(capsys, str(run_copy), QUERY, "--top-k", "5")
    assert data["method"] == "exact"
    monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 100)
    indexed, err = search_json(capsys, str(run_copy), QUERY, "--top-k", "5")
    assert indexed["method"] == "index" and not err
    assert [(h["doc_id"], h["chunk_index"]) for h in indexed["hits"]] == [
        (h["doc_id"], h["chunk_index"]) for h in data["hits"]
    ]
    assert np.allclose([h["score"] for h in indexed["hits"]], [h["score"] for h in data["hits"]], atol=1e-5)
    exact, _ = search_json(capsys, str(run_copy), QUERY, "--top-k", "5", "--exact")
    assert exact["method"] == "exact"


@pytest.mark.slow
def test_a_stale_index_is_ignored_with_a_message(run_copy, capsys, monkeypatch):
    index_files.build(open_run(str(run_copy)))
    (part,) = (run_copy / "chunks").glob("*.parquet")
    pq.write_table(pq.read_table(part).slice(1), part)  # the run's chunks changed after indexing
    monkeypatch.setattr(hits_mod, "INDEX_FROM_ROWS", 100)
    data, err = search_json(capsys, str(run_copy), QUERY, "--top-k", "3")
    assert data["method"] == "exact" and data["hits"][0]["doc_id"] == "recipe"
    assert err.strip() == (
        f"docbeam search: {run_copy}/_index is stale (it holds 232 chunks, the run has 231); "
        f"rebuild it with `docbeam index {run_copy}`; searching exactly"
    )
    index_files.build(open_run(str(run_copy)))
    manifest = json.loads((run_copy / "_manifest.json").read_text())
    (run_copy / "_manifest.json").write_text(json.dumps({**manifest, "run_id": "another-run"}))
    _, err = search_json(capsys, str(run_copy), QUERY, "--top-k", "3")
    assert "the run's chunk files changed since it was built" in err


@pytest.mark.slow
def test_a_gcs_run_is_indexed_and_searched_through_its_index(run_copy, gcs_emulator):
    bucket = gcs_emulator.create_bucket()
    gcs_emulator.upload_dir(run_copy, f"gs://{bucket}/run")
    chunks = open_run(f"gs://{bucket}/run")
    record = index_files.build(chunks)
    assert record["rows"] == 232 and f"gs://{bucket}/run/_index/chunks.faiss" in gcs_emulator.list(f"gs://{bucket}/")
    assert index_files.load(chunks)[0] is not None
    got = search_hits(f"gs://{bucket}/run", QUERY, top_k=5, use_index=True)
    want = search_hits(str(run_copy), QUERY, top_k=5, use_index=False)
    strip = [{k: v for k, v in h.items() if k != "score"} for h in got]
    assert strip == [{k: v for k, v in h.items() if k != "score"} for h in want]
    assert np.allclose([h["score"] for h in got], [h["score"] for h in want], atol=1e-5)
