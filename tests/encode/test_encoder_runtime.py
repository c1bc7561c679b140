"""The encoder runtime: shapes, devices, dtypes, flagged results, profiles."""

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from docbeam.kernels import registry
from docbeam.pipeline.core.records import Segment
from docbeam.pipeline.encode.packing import Packer, PackSpec
from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings
from tests.helpers import REPO, SAMPLES, child_env, run_job, table


def _batches(spec: PackSpec, n: int = 20) -> list:
    rng = np.random.default_rng(0)
    packer = Packer(spec)
    segs = [
        Segment(
            uid=f"d{i}",
            doc_id=f"d{i}",
            kind="chunk",
            index=0,
            start_char=0,
            end_char=1,
            ids=np.asarray([101, *rng.integers(1000, 9000, int(m)), 102], np.int32),
        )
        for i, m in enumerate(rng.integers(5, 120, n))
    ]
    return [b for s in segs for b in packer.add(s)] + list(packer.flush())


def test_flagged_results_are_recomputed_exactly(monkeypatch):
    monkeypatch.setitem(registry.KERNELS, "nan_test", "tests.kernels.nan_kernel")
    spec = PackSpec(rows=4, seq_len=128)
    batches = _batches(spec)
    flagged = EncoderRuntime(EncoderSettings(None, None, "nan_test", "float32", spec))
    exact = EncoderRuntime(EncoderSettings(None, None, "native", "float32", spec))
    (got, used, stats), (want, _, _) = flagged.encode(batches), exact.encode(batches)
    assert stats.fallbacks == flagged.stats.fallbacks == len(batches)
    assert used == ["native"] * len(batches)  # recorded as what really computed them
    for g, w in zip(got, want, strict=True):
        assert np.isfinite(g).all() and np.array_equal(g, w)


def test_compiles_once_per_shape():
    spec = PackSpec(rows=8, seq_len=128)
    rt = EncoderRuntime(EncoderSettings(None, None, "auto", "float32", spec))
    batches = _batches(spec, 60)
    rt.encode(batches)
    rt.encode(batches)
    assert rt.stats.compilations == len({b.shape for b in batches}) <= 4


# A fresh process per run: the cache directory is read once per process, at the first compile.
CACHE_PROBE = """
import logging
logging.basicConfig(level=logging.INFO)
import jax, numpy as np
from docbeam.pipeline.cost import live_counters
from docbeam.pipeline.encode.packing import PackSpec
from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings
from tests.encode.test_encoder_runtime import _batches
hits = []
jax.monitoring.register_event_listener(lambda e, **kw: hits.append(e) if e.endswith("cache_hits") else None)
notes, note = [], live_counters.note  # what the progress display says while each shape is prepared
live_counters.note = lambda text: (notes.append(text) if text else None, note(text))
spec = PackSpec(rows=4, seq_len=128)
rt = EncoderRuntime(EncoderSettings(None, None, "auto", "float32", spec))
vectors, _, _ = rt.encode(_batches(spec, 6))
np.save("vectors.npy", vectors[0])
print("notes:", "|".join(notes))
print(rt.stats.compilations, len(hits))
"""


def test_compiled_executables_are_reused_across_processes(tmp_path):
    def probe(cache: str, name: str) -> tuple[int, int, str]:
        env = child_env(DOCBEAM_COMPILE_CACHE=cache)
        (tmp_path / name).mkdir()
        done = subprocess.run(
            [sys.executable, "-c", CACHE_PROBE], cwd=tmp_path / name, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
        compilations, hits = map(int, done.stdout.split()[-2:])
        notes = next(line for line in done.stdout.splitlines() if line.startswith("notes:"))
        return compilations, hits, done.stderr + notes

    cache = tmp_path / "xla"
    first, second = probe(str(cache), "first"), probe(str(cache), "second")
    assert first[0] >= 1 and any(cache.iterdir())
    # Every encoder shape comes from the cache the second time (small helper jits that took
    # over 0.1 s under load may be hits too).
    assert second[0] == first[0] and second[1] >= first[0]
    assert first[2].count("] compiled in") == first[0] and "loaded from" not in first[2]
    assert second[2].count(f"loaded from {cache} in") == first[0] and "] compiled in" not in second[2]
    # The progress display says which while it happens: compiling the first time, loading after.
    assert first[2].count("compiling the encoder for") == first[0] and "loading the encoder" not in first[2]
    assert second[2].count("loading the encoder for") == first[0] and "compiling the encoder" not in second[2]
    assert np.array_equal(np.load(tmp_path / "first/vectors.npy"), np.load(tmp_path / "second/vectors.npy"))
    assert probe("off", "off")[1] == 0 and not (tmp_path / "off" / "off").exists()
    _, hits, stderr = probe("/proc/docbeam-cache", "unusable")  # not writable: one warning, no cache
    assert hits == 0 and "DOCBEAM_COMPILE_CACHE=/proc/docbeam-cache is not usable" in stderr


@pytest.mark.slow
def test_bfloat16_stays_close_to_float32(tmp_path, sample_run):
    out32, _ = sample_run
    run_job(SAMPLES / "*", tmp_path / "bf16", "--dtype", "bfloat16")
    a = {d["doc_id"]: np.asarray(d["embedding"]) for d in table(out32, "documents").to_pylist()}
    b = {d["doc_id"]: np.asarray(d["embedding"]) for d in table(tmp_path / "bf16", "documents").to_pylist()}
    cos = np.array([a[k] @ b[k] for k in a])
    assert cos.min() >= 0.99, cos.min()  # measured: see the README's dtype section


@pytest.mark.slow
def test_sharded_over_four_devices_matches_one(tmp_path):
    """XLA_FLAGS forces 4 host devices: each batch is split over them (data parallel)."""

    def run(out, devices):
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
        cmd = [
            sys.executable,
            "-m",
            "docbeam.pipeline.run",
            "--input",
            str(SAMPLES / "business.parquet"),  # 7 short documents: a batch split over the devices
            str(SAMPLES / "guide.md"),
            "--output",
            str(out),
            "--batch-rows",
            "8",
        ]
        subprocess.run(cmd, cwd=REPO, env=env, check=True, capture_output=True)
        return json.loads((out / "_manifest.json").read_text())

    one, four = run(tmp_path / "one", 1), run(tmp_path / "four", 4)
    assert len(one["platform"]["devices"]) == 1 and len(four["platform"]["devices"]) == 4
    x = {
        (c["doc_id"], c["chunk_index"]): np.asarray(c["embedding"])
        for c in table(tmp_path / "one", "chunks").to_pylist()
    }
    y = {
        (c["doc_id"], c["chunk_index"]): np.asarray(c["embedding"])
        for c in table(tmp_path / "four", "chunks").to_pylist()
    }
    assert x.keys() == y.keys()
    worst = max(np.abs(x[k] - y[k]).max() for k in x)
    assert worst <= 1e-6, worst


@pytest.mark.slow
def test_profile_trace_shows_the_kernel(tmp_path):
    run_job(SAMPLES / "notes.txt", tmp_path / "out", "--profile", str(tmp_path / "trace"))
    (trace,) = glob.glob(f"{tmp_path}/trace/**/*.xplane.pb", recursive=True)
    blob = open(trace, "rb").read()
    assert b"attention_xla_fused" in blob and b"layer_5" in blob and b"pooling" in blob
