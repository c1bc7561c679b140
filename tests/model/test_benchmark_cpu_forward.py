"""tests/benchmarks/cpu_forward.py: docbeam's forward and torch's run the same tokens to the same
vectors, and the report states each ratio and attention's share."""

import pytest

from tests.benchmarks import cpu_forward

pytestmark = pytest.mark.slow


def test_workers_agree_with_torch_and_the_report_states_ratios_and_attention_share():
    shapes = [(2, 16)]
    runs = {
        m: cpu_forward.worker(m, shapes, iters=1)
        for m in ("docbeam:float32", "docbeam:float32-no-attn", "torch:float32")
    }
    full, ablated, torch = (runs[m]["2x16"] for m in ("docbeam:float32", "docbeam:float32-no-attn", "torch:float32"))
    import numpy as np

    vec, ref, no_attn = (np.asarray(r["vectors"]) for r in (full, torch, ablated))
    assert vec.shape == ref.shape == (2, 384)
    assert ((vec * ref).sum(-1)).min() > 0.9999  # same model, same tokens, unit vectors
    assert ((no_attn * ref).sum(-1)).min() < 0.99  # the ablation really drops attention
    result = {
        "2x16": {
            "tokens": 32,
            "times": {m: [(r["2x16"]["wall_s"], r["2x16"]["cpu_s"])] for m, r in runs.items()},
            "parity": {"docbeam:float32": 1.0, "torch:float32": 1.0},
        }
    }
    report = cpu_forward.render(result, "CPU: test")
    assert "docbeam:float32 / torch:float32: " in report and "attention " in report
