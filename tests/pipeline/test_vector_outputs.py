"""--dims and --vector-dtype through real DirectRunner runs: the Parquet read back with pyarrow
holds exactly sentence-transformers' quantize_embeddings / truncation of the float32 run's
vectors, the manifest and _vectors/ record the format and the int8 ranges, --reuse converts a
float32 run instead of encoding it again, and waves share one set of ranges."""

import json
import logging
import warnings

import numpy as np
import pyarrow as pa
import pytest

from docbeam.pipeline.core.vector_format import RANGES_FILE, truncate
from docbeam.pipeline.io import storage
from docbeam.pipeline.launch.planning.vector_plan import trained_for_truncation
from docbeam.pipeline.search import search_hits
from tests.helpers import SAMPLES, run_job, table

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from sentence_transformers.util import quantize_embeddings

pytestmark = pytest.mark.slow


def _by_key(out, name: str) -> dict:
    keys = ["doc_id", "chunk_index"] if name == "chunks" else ["doc_id"]
    t = table(out, name, [*keys, "embedding"]).to_pylist()
    return {tuple(r[k] for k in keys): np.asarray(r["embedding"]) for r in t}


def _matrix(by_key: dict, keys: list) -> np.ndarray:
    return np.stack([by_key[k] for k in keys])


def _manifest(out) -> dict:
    return json.loads(storage.read_text(f"{out}/_manifest.json"))


def _ranges(out, name) -> np.ndarray:
    return np.asarray(json.loads(storage.read_text(f"{out}/{RANGES_FILE}"))[name], np.float32)


@pytest.fixture(scope="module")
def int8_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("int8")
    return out, run_job(SAMPLES / "*", out, "--dims", "128", "--vector-dtype", "int8")


def test_int8_columns_are_sentence_transformers_quantize_embeddings_of_the_float32_vectors(sample_run, int8_run):
    f32, (out, _) = sample_run[0], int8_run
    man = _manifest(out)
    assert man["vectors"]["dims"] == 128 and man["vectors"]["dtype"] == "int8" and man["vectors"]["model_dim"] == 384
    assert man["vectors"]["ranges_file"] == RANGES_FILE and man["vectors"]["bytes_per_vector"] == 128
    for name in ("chunks", "documents"):
        assert table(out, name).schema.field("embedding").type == pa.list_(pa.int8(), 128)
        ranges = _ranges(out, name)
        np.testing.assert_array_equal(np.asarray(man["vectors"]["int8_ranges"][name], np.float32), ranges)
        full, codes = _by_key(f32, name), _by_key(out, name)
        keys = sorted(full)
        assert sorted(codes) == keys
        theirs = quantize_embeddings(truncate(_matrix(full, keys), 128), "int8", ranges=ranges)
        assert _matrix(codes, keys).astype(np.int8).tobytes() == theirs.tobytes()
        # the ranges are the min and max of this very run's truncated vectors
        t = truncate(_matrix(full, keys), 128)
        np.testing.assert_allclose(ranges, np.vstack((t.min(0), t.max(0))), atol=1e-6)


@pytest.mark.parametrize("dtype,dims", [("binary", None), ("float16", "256")])
def test_binary_is_ubinary_and_float16_a_cast(sample_run, tmp_path, dtype, dims):
    f32 = sample_run[0]
    out = tmp_path / dtype
    run_job(SAMPLES / "*", out, "--vector-dtype", dtype, *(["--dims", dims] if dims else []))
    dim = int(dims or 384)
    for name in ("chunks", "documents"):
        full, got = _by_key(f32, name), _by_key(out, name)
        keys = sorted(full)
        t = truncate(_matrix(full, keys), dim)
        if dtype == "binary":
            assert table(out, name).schema.field("embedding").type == pa.list_(pa.uint8(), 48)
            assert _matrix(got, keys).astype(np.uint8).tobytes() == quantize_embeddings(t, "ubinary").tobytes()
        else:
            assert table(out, name).schema.field("embedding").type == pa.list_(pa.float16(), 256)
            assert _matrix(got, keys).astype(np.float16).tobytes() == t.astype(np.float16).tobytes()
    assert not storage.exists(f"{out}/{RANGES_FILE}")
    assert _manifest(out)["vectors"] == {
        "model_dim": 384,
        "dims": dim,
        "dtype": dtype,
        "bytes_per_vector": 48 if dtype == "binary" else 512,
    }


def test_reuse_of_a_float32_run_converts_its_vectors_instead_of_encoding(sample_run, tmp_path):
    f32 = sample_run[0]
    out = tmp_path / "converted"
    res = run_job(SAMPLES / "*", out, "--reuse", str(f32), "--dims", "128", "--vector-dtype", "int8")
    reuse = res.manifest["reuse"]
    assert reuse["vectors_converted"] and reuse["documents_encoded"] == 0
    assert reuse["documents_reused"] == res.manifest["counts"]["ok"] > 0
    full, codes = _by_key(f32, "chunks"), _by_key(out, "chunks")
    keys = sorted(full)
    theirs = quantize_embeddings(truncate(_matrix(full, keys), 128), "int8", ranges=_ranges(out, "chunks"))
    assert _matrix(codes, keys).astype(np.int8).tobytes() == theirs.tobytes()


def test_reuse_with_the_same_int8_format_copies_codes_and_ranges(int8_run, tmp_path):
    before, _ = int8_run
    out = tmp_path / "again"
    res = run_job(SAMPLES / "*", out, "--reuse", str(before), "--dims", "128", "--vector-dtype", "int8")
    assert res.manifest["reuse"]["same_settings"] and res.manifest["reuse"]["documents_encoded"] == 0
    assert storage.read_text(f"{out}/{RANGES_FILE}") == storage.read_text(f"{before}/{RANGES_FILE}")
    assert {k: v.tobytes() for k, v in _by_key(out, "chunks").items()} == {
        k: v.tobytes() for k, v in _by_key(before, "chunks").items()
    }


def test_reuse_of_an_int8_run_for_float32_encodes_again(int8_run, tmp_path, caplog):
    before, _ = int8_run
    with caplog.at_level(logging.WARNING, logger="docbeam"):
        res = run_job(SAMPLES / "*", tmp_path / "f32", "--reuse", str(before))
    assert res.manifest["reuse"]["documents_reused"] == 0 and res.manifest["reuse"]["documents_encoded"] > 0
    said = [r.getMessage() for r in caplog.records if "encoded again" in r.getMessage()]
    assert said and "vectors" in said[0] and "not the full float32 ones a conversion starts from" in said[0]


def test_waves_quantise_with_the_first_waves_ranges(sample_run, tmp_path):
    f32 = sample_run[0]
    out = tmp_path / "waves"
    run_job(SAMPLES / "*", out, "--vector-dtype", "int8", "--wave-files", "2")
    assert len(list((out / "_progress").glob("*.json"))) >= 2
    # Only the first wave calibrated; the later ones were given its ranges, which are the run's.
    (calibrated,) = (out / "_vectors").glob("*-chunks-ranges.json")
    ranges = _ranges(out, "chunks")
    np.testing.assert_array_equal(np.asarray(json.loads(calibrated.read_text()), np.float32), ranges)
    full, codes = _by_key(f32, "chunks"), _by_key(out, "chunks")
    keys = sorted(full)
    theirs = quantize_embeddings(_matrix(full, keys), "int8", ranges=ranges)  # clipped outside the first wave's
    ours = _matrix(codes, keys).astype(np.int16)
    # Batches packed per wave move the last bits of the encoder's output (bfloat16 where the CPU has it),
    # and a value at a bucket's edge moves one bucket.
    assert np.abs(ours - theirs).max() <= 1 and (ours == theirs).mean() > 0.99


def test_search_over_an_int8_run_finds_what_the_float32_run_finds(sample_run, int8_run):
    f32, (out, _) = sample_run[0], int8_run
    query = "how do I embed the sample documents"
    exact = [(h["doc_id"], h["chunk_index"]) for h in search_hits(str(f32), query, 10)]
    found = search_hits(str(out), query, 10)
    assert len(found) == 10 and found[0]["text"]
    assert (
        len({(h["doc_id"], h["chunk_index"]) for h in found} & set(exact)) >= 6
    )  # 128 dims of a model not trained for it


def test_dims_warns_once_for_a_model_not_trained_for_truncation(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="docbeam"):
        run_job(SAMPLES / "notes.txt", tmp_path / "out", "--dims", "64")
    said = [r.getMessage() for r in caplog.records if "--dims 64" in r.getMessage()]
    assert len(said) == 1 and "Matryoshka" in said[0]


def test_a_model_card_that_names_matryoshka_is_trained_for_truncation(tmp_path):
    assert trained_for_truncation(tmp_path) is None
    (tmp_path / "README.md").write_text("---\ntags:\n- loss:MatryoshkaLoss\n---\n# a model\n")
    assert trained_for_truncation(tmp_path) == "README.md"


def test_docbeam_embed_gives_vectors_as_a_run_stores_them(int8_run, capsys):
    from docbeam.pipeline import cli
    from docbeam.pipeline.encode.embed import embed

    out, _ = int8_run
    full = embed(["how are vectors stored?"])
    assert cli.main(["embed", "how are vectors stored?", "--dtype", "float32", "--like", str(out)]) == 0
    codes = np.asarray(json.loads(capsys.readouterr().out), np.int8)
    theirs = quantize_embeddings(truncate(full, 128), "int8", ranges=_ranges(out, "chunks"))
    assert codes.tobytes() == theirs.tobytes()
    assert cli.main(["embed", "how are vectors stored?", "--dtype", "float32", "--dims", "64"]) == 0
    cut = np.asarray(json.loads(capsys.readouterr().out), np.float32)
    np.testing.assert_allclose(cut, truncate(full, 64), atol=1e-6)


def test_a_budget_sample_and_the_rest_of_an_int8_run_share_one_set_of_ranges(sample_run, tmp_path):
    """--budget-usd runs a sample first and copies its codes: the rest must use the sample's ranges."""
    f32 = sample_run[0]
    out = tmp_path / "budget"
    run_job(SAMPLES / "*", out, "--vector-dtype", "int8", "--budget-usd", "100", "--budget-sample", "20")
    ranges = _ranges(out, "chunks")
    full, codes = _by_key(f32, "chunks"), _by_key(out, "chunks")
    keys = sorted(full)
    theirs = quantize_embeddings(_matrix(full, keys), "int8", ranges=ranges)
    ours = _matrix(codes, keys).astype(np.int16)
    # one set of ranges decodes every code (per-batch bfloat16 noise moves a value at an edge one bucket)
    assert np.abs(ours - theirs).max() <= 1 and (ours == theirs).mean() > 0.99


def test_int8_search_keeps_99_percent_of_float32s_top_10_on_the_labelled_questions(sample_run, tmp_path):
    """README's recommendation, held: an int8 conversion of the sample run (all 384 dimensions)
    returns at least 0.99 of float32 exact search's top 10 for the quality set's questions."""
    from docbeam.pipeline.search.hits import exact_rows
    from docbeam.pipeline.search.query import embed_queries
    from docbeam.pipeline.search.run_chunks import open_run, read_rows
    from tests.search.quality import questions

    f32 = sample_run[0]
    out = tmp_path / "int8-384"
    run_job(SAMPLES / "*", out, "--reuse", str(f32), "--vector-dtype", "int8")
    runs = [open_run(str(f32)), open_run(str(out))]
    vectors = embed_queries(runs[0].manifest["model"], [q["q"] for q in questions()])
    tops = []
    for run in runs:
        _, rows = exact_rows(run, vectors, 10)
        keys = read_rows(run, sorted({int(r) for r in rows.ravel()}), ("doc_id", "chunk_index"))
        tops.append([{(keys[int(r)]["doc_id"], keys[int(r)]["chunk_index"]) for r in ranked} for ranked in rows])
    recall = np.mean([len(a & b) / 10 for a, b in zip(*tops)])
    assert recall >= 0.99, recall


def test_an_extractor_changed_over_an_int8_run_encodes_again(tmp_path, caplog):
    """The extractors score candidates against the full float32 vectors: an int8 run's codes
    cannot stand in for them, so a changed summary setting over one encodes every document."""
    docs = SAMPLES / "*.txt"
    before = tmp_path / "int8"
    run_job(docs, before, "--vector-dtype", "int8", "--extract", "summary")
    with caplog.at_level(logging.WARNING, logger="docbeam"):
        res = run_job(
            docs,
            tmp_path / "again",
            "--vector-dtype",
            "int8",
            "--extract",
            "summary",
            "--summary-sentences",
            "2",
            "--reuse",
            str(before),
        )
    assert res.manifest["reuse"]["documents_reused"] == 0 and res.manifest["reuse"]["documents_encoded"] > 0
    said = [r.getMessage() for r in caplog.records if "encoded again" in r.getMessage()]
    assert said and "summary need(s) the full float32 vectors" in said[0]
    fresh = run_job(
        docs, tmp_path / "fresh", "--vector-dtype", "int8", "--extract", "summary", "--summary-sentences", "2"
    )
    assert fresh.manifest["counts"]["extractions"] == res.manifest["counts"]["extractions"]

    def rows(out):
        return sorted(tuple(r.values()) for r in table(out, "extractions", ["doc_id", "kind", "value"]).to_pylist())

    assert rows(tmp_path / "again") == rows(tmp_path / "fresh")
