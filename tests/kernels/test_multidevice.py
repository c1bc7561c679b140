"""Every kernel on a 4-device data-parallel mesh equals its single-device result, and runs
per device on its own rows (the Pallas kernels too: XLA cannot partition them by itself)."""

import json
import secrets
import subprocess
import sys

from tests.helpers import REPO, child_env


def test_every_kernel_runs_per_device_and_matches_one_device():
    seed = secrets.randbits(32)
    out = subprocess.run(
        [sys.executable, "-m", "tests.kernels.multidevice", str(seed)],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    results = {r["kernel"]: r for r in map(json.loads, out.stdout.splitlines())}
    assert {"reference", "native", "xla_fused", "flash", "tpu_flash", "splash", "gpu_mha"} <= set(results)
    for name, r in results.items():
        assert r["max_diff"] <= 1e-5, f"{name}: 4 devices differ from 1 by {r['max_diff']} (seed {seed})"
        assert r["out_devices"] == 4, f"{name}: result not spread over the 4 devices"
        assert not r["all_gather"], f"{name}: the batch is gathered around the kernel"
        assert r["per_device_q"] and not r["whole_batch_q"], f"{name}: the kernel does not run on 1 row per device"
