"""The device check's core (`aot.measure_here`, run by tests/device/run_checks.sh on a lent GPU):
the bound follows from the compiled cost and the rates passed in, and the measurement is real."""

import json
from pathlib import Path

import pytest

from docbeam.pipeline.encode import aot
from docbeam.pipeline.encode.packing import PackSpec
from docbeam.pipeline.encode.runtime import EncoderSettings
from tests.benchmarks import bound_vs_measured
from tests.model.tiny import write_tiny_bert


@pytest.fixture(scope="module")
def settings(tmp_path_factory) -> EncoderSettings:
    model = write_tiny_bert(tmp_path_factory.mktemp("tiny"))
    return EncoderSettings(str(model), None, "auto", "float32", PackSpec(rows=4, seq_len=64))


def test_bound_is_the_lower_of_compute_and_memory_and_the_run_is_timed(settings):
    rates = aot.ChipRates(peak_flops=1e12, hbm_bytes_per_s=1e10, hbm_bytes=2**30)
    [(r, runs)] = aot.measure_here(settings, rates, [(4, 64, 32)], batches=2, repeats=3)
    assert r.flops_per_token > 0 and r.bytes_per_token > 0
    compute, memory = 1e12 / r.flops_per_token, 1e10 / r.bytes_per_token
    assert r.bound_tokens_per_s == pytest.approx(min(compute, memory))
    assert r.limit == ("memory" if memory < compute else "compute")
    assert len(runs) == 3 and all(0 < x < float("inf") for x in runs)
    # Ten times the bandwidth: a memory-bound shape's bound rises, the measurement cannot.
    faster = aot.ChipRates(peak_flops=1e15, hbm_bytes_per_s=1e11, hbm_bytes=2**30)
    [(r2, _)] = aot.measure_here(settings, faster, [(4, 64, 32)], batches=1, repeats=1)
    assert r2.bound_tokens_per_s == pytest.approx(10 * memory, rel=1e-6)


def test_prepared_folder_gets_random_weights_of_the_models_shapes(settings, tmp_path, capsys):
    """What the device script carries: a model's small files and its weights' shapes, no weights."""
    src = tmp_path / "prepared"
    bound_vs_measured.prepare(src, Path(settings.model))
    assert not (src / "model.safetensors").exists()
    out = tmp_path / "rows.json"
    argv = ["--model", str(src), "--peak-tflops", "1", "--hbm-gbps", "10", "--dtype", "float32", "--seq", "64"]
    assert bound_vs_measured.main([*argv, "--batches", "1", "--repeats", "1", "--json", str(out)]) == 0
    [row] = json.loads(out.read_text())
    assert row["seq_len"] == 64 and row["measured_tokens_per_s"][0] > 0
    assert "of bound" in capsys.readouterr().out
