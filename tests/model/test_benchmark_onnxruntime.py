"""The embed benchmark's onnxruntime column (tests/benchmarks/embed.py): the ONNX export of the
default checkpoint runs the tokens sentence-transformers runs and gives its vectors, and the
report prints that parity and int8's against its own float32."""

from pathlib import Path

import pytest

from tests.benchmarks import embed, onnx_export

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, dict[str, dict], int]:
    where = tmp_path_factory.mktemp("embed")
    folder = onnx_export.export(where / "onnx", int8=True)
    # 70% short documents and 30% of 300-1,200 words: some fit one window, some are truncated
    corpus = embed.build_corpus_file(where / "mixed.jsonl", 16, "mixed")
    results = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(embed.ONNX_DIR, str(folder))
        for method in ("st:float32", "onnxruntime:float32", "onnxruntime:int8"):
            name, _, dtype = method.partition(":")
            (where / method).mkdir()
            results[method] = embed.WORKERS[name](corpus, where / method, dtype, [])
    truncated = embed._truncated_tokens([d["text"] for d in embed._texts(corpus)])
    return where, results, truncated


def test_onnxruntime_runs_the_truncated_tokens_sentence_transformers_runs(runs):
    _, results, truncated = runs
    assert results["onnxruntime:float32"]["tokens"] == truncated == results["st:float32"]["tokens"]
    assert results["onnxruntime:int8"]["tokens"] == truncated
    assert results["onnxruntime:float32"]["docs"] == 16 and results["onnxruntime:float32"]["wall_s"] > 0


def test_parity_to_sentence_transformers_and_int8_to_its_float32_are_printed(runs):
    where, results, _ = runs
    parity = embed._parity(where)
    f32 = parity["onnxruntime:float32 vs st:float32"]
    assert 0 < f32["docs"] < 16  # only the documents that fit one window
    assert f32["min_cosine"] >= 0.999
    int8 = parity["onnxruntime:int8 vs onnxruntime:float32"]
    assert int8["docs"] == f32["docs"]
    assert 0.5 < int8["min_cosine"] < 0.9999  # quantised: close, and not the float32 model again
    report = embed.render({"runs": {m: [{**r, "peak_rss_mib": 1.0}] for m, r in results.items()}, "parity": parity})
    assert f"parity onnxruntime:float32 vs st:float32: min cosine {f32['min_cosine']:.6f}" in report
    assert "parity onnxruntime:int8 vs onnxruntime:float32: min cosine" in report
    assert "onnxruntime:float32 / st:float32: " in report
    assert "onnxruntime:int8 / onnxruntime:float32: " in report
