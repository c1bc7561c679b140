"""Run every attention kernel on 4 CPU devices (a data-parallel mesh) and on one, compare.

Started by tests/kernels/test_multidevice.py in its own process, because the device count
(--xla_force_host_platform_device_count) is fixed when JAX starts. Prints one JSON line per
kernel: the largest difference to the single-device result, and what the compiled HLO of the
4-device program holds (collectives; the per-device shape of q).
"""

import json
import os
import sys

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

from docbeam.kernels import api as kernels  # noqa: E402

BATCH, SEQ, HEADS, DIM = 4, 40, 2, 16


def main(seed: int) -> None:
    assert len(jax.devices()) == 4, jax.devices()
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((BATCH, SEQ, HEADS, DIM)).astype(np.float32) for _ in range(3))
    seg = np.ones((BATCH, SEQ), np.int32)
    seg[:, 25:] = 2
    seg[1, 33:] = 0
    mesh = Mesh(np.array(jax.devices()), ("data",))
    rows = NamedSharding(mesh, PartitionSpec("data"))
    for name in kernels.available("cpu", (BATCH, SEQ, HEADS, DIM), "float32"):
        one = kernels.get(name, platform="cpu", shape=(BATCH, SEQ, HEADS, DIM)).attend
        many = kernels.get(name, platform="cpu", shape=(BATCH, SEQ, HEADS, DIM), mesh=mesh).attend
        single = np.asarray(jax.jit(lambda a, b, c, s, f=one: f(a, b, c, segment_ids=s))(q, k, v, seg))
        fn = jax.jit(lambda a, b, c, s, f=many: f(a, b, c, segment_ids=s), out_shardings=rows)
        args = [jax.device_put(x, rows) for x in (q, k, v, seg)]
        sharded = fn(*args)
        hlo = fn.lower(*args).compile().as_text()
        print(
            json.dumps(
                {
                    "kernel": name,
                    "max_diff": float(np.abs(np.asarray(sharded) - single).max()),
                    "out_devices": len(sharded.sharding.device_set),
                    "all_gather": "all-gather" in hlo,
                    "per_device_q": f"f32[1,{SEQ},{HEADS},{DIM}]" in hlo,
                    "whole_batch_q": f"f32[{BATCH},{SEQ},{HEADS},{DIM}]" in hlo,
                }
            )
        )


if __name__ == "__main__":
    main(int(sys.argv[1]))
