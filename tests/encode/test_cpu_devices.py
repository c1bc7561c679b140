"""A local CPU split into XLA devices: how many, what a bad setting says, and that a run on
two devices writes the vectors a run on one writes (a real `docbeam run` each)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.encode import cpu_devices
from docbeam.pipeline.encode.packing import spec_for
from docbeam.pipeline.launch.planning.planner import jax_local_chips
from tests.helpers import SAMPLES, table

DOCBEAM = str(Path(sys.executable).parent / "docbeam")


def test_one_device_per_core_up_to_the_cap(monkeypatch):
    monkeypatch.delenv(cpu_devices.ENV, raising=False)
    assert [cpu_devices.wanted(c) for c in (1, 2, 3, 64)] == [1, 2, 3, cpu_devices.MAX_DEVICES]
    monkeypatch.setenv(cpu_devices.ENV, "1")
    assert cpu_devices.wanted(64) == 1


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_a_bad_setting_is_named(monkeypatch, value):
    monkeypatch.setenv(cpu_devices.ENV, value)
    with pytest.raises(UsageError, match=f"DOCBEAM_CPU_DEVICES must be a whole number from 1 up, not '{value}'"):
        cpu_devices.wanted()


def test_this_process_was_split_before_jax_started_and_a_late_split_changes_nothing():
    assert jax.local_device_count() == 2  # tests/conftest.py pins two and splits first
    cpu_devices.split()  # JAX has started: no error, nothing changes
    assert jax.local_device_count() == 2 and jax_local_chips("cpu") == 2


def test_every_cpu_device_gets_a_row_at_least():
    assert spec_for(256, "cpu", chips=2).rows == 4  # 1,024 tokens: two rows each
    assert spec_for(1024, "cpu", chips=2).rows == 2  # one row of 1,024 would leave a device idle
    assert spec_for(256, "cpu", chips=2, rows=3).rows == 3  # --batch-rows is the user's


@pytest.mark.slow
def test_two_devices_write_the_vectors_one_device_writes(tmp_path):
    def run(devices: str) -> tuple[dict, np.ndarray]:
        out = tmp_path / f"d{devices}"
        env = {**os.environ, "JAX_PLATFORMS": "cpu", cpu_devices.ENV: devices}
        args = ["run", "--input", str(SAMPLES / "*"), "--output", str(out), "--dtype", "float32"]
        proc = subprocess.run([DOCBEAM, *args], capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        chunks = table(out, "chunks", ["doc_id", "chunk_index", "embedding"])
        chunks = chunks.sort_by([("doc_id", "ascending"), ("chunk_index", "ascending")]).to_pylist()
        manifest = json.loads((out / "_manifest.json").read_text())
        return manifest, np.array([c["embedding"] for c in chunks])

    one, vectors_one = run("1")
    two, vectors_two = run("2")
    assert one["platform"]["devices"] == ["cpu:0"] and two["platform"]["devices"] == ["cpu:0", "cpu:1"]
    assert vectors_one.shape == vectors_two.shape and len(vectors_one) > 20
    np.testing.assert_allclose(vectors_two, vectors_one, atol=2e-6)


@pytest.mark.slow
def test_empty_rows_that_even_out_the_devices_are_counted_as_padding(tmp_path):
    """--batch-rows 3 on two devices: each batch goes out with a fourth, empty row; the
    encoder's padding counts it (the packer's does not), so "the encoder ran N" is honest."""
    from tests.helpers import run_job

    totals = run_job(SAMPLES / "*.md", tmp_path / "out", "--batch-rows", "3").stage_totals
    packed, encoded = totals["pack"], totals["encode"]
    assert encoded["tokens"] == packed["tokens"]
    extra = encoded["pad_tokens"] - packed["pad_tokens"]
    assert extra > 0 and extra % 64 == 0, (packed, encoded)  # whole empty rows of 256 or 64 tokens
