"""--host-processes N: the host work in N worker processes (Beam's multi-process runner), the
model served from the launcher's process. Outputs are the one-process run's."""

import numpy as np
import pytest

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.launch.planning.planner import host_processes
from tests.helpers import SAMPLES, run_job, table

pytestmark = pytest.mark.slow


def rows(out, name: str, key: list[str]) -> list[dict]:
    return sorted(table(out, name).to_pylist(), key=lambda r: [r[k] for k in key])


def test_two_host_processes_write_what_one_writes(sample_run, tmp_path):
    one_out, one = sample_run
    res = run_job(SAMPLES / "*", tmp_path / "two", "--host-processes", "2")
    assert res.manifest["accounting"]["ok"] and res.manifest["counts"] == one.manifest["counts"]
    for name, key in (("chunks", ["doc_id", "chunk_index"]), ("documents", ["doc_id"])):
        a, b = rows(one_out, name, key), rows(tmp_path / "two", name, key)
        assert [{k: v for k, v in r.items() if k != "embedding"} for r in a] == [
            {k: v for k, v in r.items() if k != "embedding"} for r in b
        ]
        va, vb = (np.asarray([r["embedding"] for r in t], np.float32) for t in (a, b))
        # other bundles pack other batches: float32 sums in another order
        assert (va * vb).sum(1).min() >= 0.99999
    enc = res.stage_totals["encode"]
    assert enc["ipc_us"] > 0 and enc["elements_out"] == one.stage_totals["encode"]["elements_out"]


def test_host_processes_are_one_unless_asked_and_local_only():
    assert host_processes(0, local=True) == 1 and host_processes(3, local=True) == 3
    with pytest.raises(UsageError, match="local runner only"):
        host_processes(2, local=False)
