"""--host-processes N: parse and chunk in a pool of N processes beside the one that encodes
(graph.host_pool). Outputs and meters are the one-process run's; no pool process starts a JAX
backend."""

import numpy as np
import pytest

from docbeam.pipeline.cost import metering
from docbeam.pipeline.graph import host_pool
from docbeam.pipeline.launch.planning.planner import host_processes
from tests.helpers import SAMPLES, run_job, table

pytestmark = pytest.mark.slow

# Counters a stage's work decides, wherever it runs (times and peak memory are the process's).
WORK_COUNTERS = ("elements_in", "elements_out", "bytes_in", "bytes_out", "tokens", "rejected", "skipped")


def rows(out, name: str, key: list[str]) -> list[dict]:
    return sorted(table(out, name).to_pylist(), key=lambda r: [r[k] for k in key])


def test_two_host_processes_write_and_meter_what_one_does(sample_run, tmp_path):
    one_out, one = sample_run
    res = run_job(SAMPLES / "*", tmp_path / "two", "--host-processes", "2")
    assert res.manifest["accounting"]["ok"] and res.manifest["counts"] == one.manifest["counts"]
    for name, key in (("chunks", ["doc_id", "chunk_index"]), ("documents", ["doc_id"])):
        a, b = rows(one_out, name, key), rows(tmp_path / "two", name, key)
        assert [{k: v for k, v in r.items() if k != "embedding"} for r in a] == [
            {k: v for k, v in r.items() if k != "embedding"} for r in b
        ]
        va, vb = (np.asarray([r["embedding"] for r in t], np.float32) for t in (a, b))
        # the pool hands back chunks in another order: other batches, float32 sums in another order
        assert (va * vb).sum(1).min() >= 0.99999
    for stage in ("parse", "chunk", "pack", "encode", "assemble"):
        got, want = res.stage_totals[stage], one.stage_totals[stage]
        assert {c: got.get(c) for c in WORK_COUNTERS} == {c: want.get(c) for c in WORK_COUNTERS}, stage
    for stage in ("parse", "chunk"):  # billed from the pool processes' own clocks
        assert res.stage_totals[stage]["cpu_us"] > 0
    pool = host_pool.pool(2)
    probes = [f.result() for f in [pool.submit(host_pool.probe) for _ in range(4)]]
    assert all(p["jax_backends"] == [] and p["jax_platforms"] == "cpu" for p in probes), probes


def test_meter_updates_made_in_a_pool_process_replay_on_the_workers_meters(monkeypatch):
    monkeypatch.setattr(metering, "_recorded", [])
    meter = metering.StageMeter("parse")
    meter.add(elements_in=2, tokens=7)
    meter.count("skipped_image", 3)
    with meter.timed():
        sum(range(1000))
    updates = metering.recorded()
    assert [u[1] for u in updates] == ["add", "count", "add", "gauge"] and metering.recorded() == []
    assert updates[0] == ("parse", "add", (), {"elements_in": 2, "tokens": 7})
    replayed = []
    monkeypatch.setattr(metering, "_recorded", None)
    monkeypatch.setattr(metering.StageMeter, "add", lambda self, **v: replayed.append((self.stage, v)))
    metering.replay(updates[:1])
    assert replayed == [("parse", {"elements_in": 2, "tokens": 7})]


def test_host_processes_default_to_every_core_on_an_accelerator_and_one_on_a_cpu():
    assert host_processes(0, "cpu") == 1 and host_processes(0, "tpu") == 0 and host_processes(0, "gpu") == 0
    assert host_processes(3, "cpu") == 3 and host_processes(1, "tpu") == 1
    assert host_pool.size(0) >= 1 and host_pool.size(3) == 3
    assert host_pool.pool(1) is None
