"""Every attention implementation that runs here, against the float64 reference.

Fresh random inputs each session (seed printed on failure; set DOCBEAM_TEST_SEED to
replay). Interpret-mode kernels are exercised on small shapes so the suite stays fast.
"""

import os
import secrets

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from docbeam.kernels import api as kernels
from docbeam.kernels import reference

SEED = int(os.environ.get("DOCBEAM_TEST_SEED", secrets.randbits(32)))
TOLERANCE = {"float32": 1e-5, "bfloat16": 2e-2}  # max |out - ref| / max |ref|


def _segments(batch: int, seq: int, layout: str, rng) -> np.ndarray:
    seg = np.zeros((batch, seq), np.int32)
    for b in range(batch):
        if layout == "packed":  # several segments of random length, then padding
            at, sid = 0, 1
            while at < seq - 4:
                n = int(rng.integers(1, max(2, seq // 2)))
                seg[b, at : at + n] = sid
                at, sid = at + n, sid + 1
        elif layout == "interleaved":  # ids need not be sorted or contiguous
            seg[b] = rng.integers(1, 4, seq)
        elif layout == "one":
            seg[b] = 1
    if layout == "packed" and batch > 1:
        seg[-1] = 0  # an all-padding row
    return seg


CASES = {
    # name: (batch, seq, heads, head_dim, layout)
    "seq_not_divisible_by_block": (2, 200, 12, 32, "packed"),
    "seq_shorter_than_block": (2, 17, 12, 64, "packed"),
    "batch_1_heads_12x64": (1, 130, 12, 64, "one"),
    "unsorted_ids": (2, 48, 12, 32, "interleaved"),
}


# Local windows (a token sees its segment's tokens at most `window` away): narrower than a
# block, spanning several blocks, zero, and over unsorted ids.
WINDOW_CASES = {
    # name: (batch, seq, heads, head_dim, layout, window)
    "window_7_packed": (2, 200, 4, 32, "packed", 7),
    "window_64_over_blocks": (1, 300, 2, 64, "one", 64),
    "window_0": (2, 40, 2, 16, "packed", 0),
    "window_5_unsorted_ids": (2, 48, 2, 32, "interleaved", 5),
}


def _inputs(case: str, dtype: str):
    batch, seq, heads, dim, layout = CASES[case] if case in CASES else WINDOW_CASES[case][:5]
    rng = np.random.default_rng([SEED, hash(case) & 0xFFFF])
    q, k, v = (rng.standard_normal((batch, seq, heads, dim)).astype(np.float32) for _ in range(3))
    q, k, v = (np.asarray(jnp.asarray(x, dtype).astype(jnp.float32)) for x in (q, k, v))  # as the kernel sees them
    return q, k, v, _segments(batch, seq, layout, rng)


def _oracle(q, k, v, seg, scale=None, window=None) -> np.ndarray:
    with jax.enable_x64(True):
        args = (jnp.asarray(x, jnp.float64) for x in (q, k, v))
        return np.asarray(reference.attend(*args, segment_ids=jnp.asarray(seg), scale=scale, window=window))


IMPLEMENTATIONS = kernels.available()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_matches_float64_reference(name, case, dtype):
    q, k, v, seg = _inputs(case, dtype)
    batch, seq, heads, dim, _ = CASES[case]
    if not kernels.availability(name, kernels.platform_of_backend(), (batch, seq, heads, dim), dtype).usable:
        pytest.skip(f"{name} does not take {dtype}")
    attend = kernels.get(name, shape=(batch, seq, heads, dim), dtype=dtype).attend
    # float32 means float32 matmuls: GPUs would otherwise use TF32 (no effect on CPU).
    with jax.default_matmul_precision("float32" if dtype == "float32" else "default"):
        out = jax.jit(lambda a, b, c, s: attend(a, b, c, segment_ids=s))(
            *(jnp.asarray(x, dtype) for x in (q, k, v)), seg
        )
    out = np.asarray(out.astype(jnp.float32), np.float64)
    ref = _oracle(q, k, v, seg)
    assert out.shape == ref.shape and out.dtype == np.float64
    err = np.abs(out - ref).max() / np.abs(ref).max()
    assert err <= TOLERANCE[dtype], f"{name} {case} {dtype}: relative error {err:.2e} (seed {SEED})"
    assert np.all(out[seg == 0] == 0), f"{name}: padding rows must be exactly zero (seed {SEED})"


WINDOWED = [n for n in IMPLEMENTATIONS if kernels.availability(n, kernels.platform_of_backend(), window=4).usable]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", list(WINDOW_CASES))
@pytest.mark.parametrize("name", WINDOWED)
def test_local_window_matches_float64_reference(name, case, dtype):
    q, k, v, seg = _inputs(case, dtype)
    batch, seq, heads, dim, _, window = WINDOW_CASES[case]
    shape = (batch, seq, heads, dim)
    if not kernels.availability(name, kernels.platform_of_backend(), shape, dtype, window).usable:
        pytest.skip(f"{name} does not take {dtype}")
    attend = kernels.get(name, shape=shape, dtype=dtype, window=window).attend
    with jax.default_matmul_precision("float32" if dtype == "float32" else "default"):
        out = jax.jit(lambda a, b, c, s: attend(a, b, c, segment_ids=s, window=window))(
            *(jnp.asarray(x, dtype) for x in (q, k, v)), seg
        )
    out = np.asarray(out.astype(jnp.float32), np.float64)
    ref = _oracle(q, k, v, seg, window=window)
    err = np.abs(out - ref).max() / np.abs(ref).max()
    assert err <= TOLERANCE[dtype], f"{name} {case} {dtype}: relative error {err:.2e} (seed {SEED})"
    assert np.all(out[seg == 0] == 0), f"{name}: padding rows must be exactly zero (seed {SEED})"
    # The window must bite: the same inputs without it give a clearly different answer.
    assert np.abs(_oracle(q, k, v, seg) - ref).max() > 1e-3


def test_windowed_kernels_are_the_ones_that_say_so():
    assert {"reference", "native", "xla_fused", "flash", "blockwise"} <= set(WINDOWED)
    for name in ("tpu_flash", "splash", "gpu_mha", "tokamax"):
        for platform in ("cpu", "gpu", "tpu"):
            avail = kernels.availability(name, platform, (1, 4096, 12, 64), "bfloat16", window=64)
            assert not avail.usable and "window" in avail.reason or avail.status is kernels.Status.NOT_IMPORTABLE


@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_segments_do_not_leak(name):
    """Changing one segment's keys and values never moves another segment's outputs."""
    q, k, v, _ = _inputs("seq_not_divisible_by_block", "float32")
    seg = np.zeros(q.shape[:2], np.int32)
    seg[:, :90], seg[:, 90:190] = 1, 2
    attend = kernels.get(name, shape=q.shape).attend
    run = jax.jit(lambda a, b, c: attend(a, b, c, segment_ids=seg))
    before = np.asarray(run(q, k, v))
    k2, v2 = k.copy(), v.copy()
    k2[:, 90:190] += 3.0
    v2[:, 90:190] -= 5.0
    after = np.asarray(run(q, k2, v2))
    # Bit-exact for every kernel but xla_fused, whose softmax shares one stabiliser (the row
    # maximum) across segments: a neighbour then moves the last bits, never the value.
    tolerance = 1e-6 if name == "xla_fused" else 0.0
    leak = np.abs(before[:, :90] - after[:, :90]).max()
    assert leak <= tolerance * np.abs(before).max(), f"{name}: segment 2 leaked into segment 1 ({leak:.2e})"
    assert not np.allclose(before[:, 90:190], after[:, 90:190])


def test_all_expected_implementations_run_on_cpu():
    # Everything docbeam ships must at least run emulated here, so CI checks every one.
    if kernels.platform_of_backend() != "cpu":
        pytest.skip("CPU-only expectation")
    assert {"reference", "native", "xla_fused", "flash", "blockwise", "tpu_flash", "splash", "gpu_mha"} <= set(
        IMPLEMENTATIONS
    )


@pytest.mark.parametrize("gap", [0, 30, 59, 61, 80, 86, 88, 90, 95, 120, 400])
def test_xla_fused_underflow_is_nan_never_a_wrong_number(gap):
    """A masked key `gap` above a query's own logits pushes the unmasked-max softmax toward
    float32's subnormal range: the result is right (vs float64) or NaN, never between."""
    rng = np.random.default_rng([SEED, gap])
    q = np.zeros((1, 8, 1, 4), np.float32)
    q[..., 0] = 1.0
    k = rng.standard_normal((1, 8, 1, 4)).astype(np.float32) * 0.1
    k[0, :4, 0, 0] += -float(gap)  # segment 1's own logits
    v = rng.standard_normal((1, 8, 1, 4)).astype(np.float32)
    seg = np.array([[1, 1, 1, 1, 2, 2, 2, 2]], np.int32)
    out = np.asarray(kernels.get("xla_fused").attend(q, k, v, segment_ids=seg, scale=1.0))
    ref = _oracle(q, k, v, seg, scale=1.0)
    assert np.allclose(out[0, 4:], ref[0, 4:], rtol=1e-5, atol=1e-6)
    mine = out[0, :4]
    assert np.isnan(mine).all() or np.allclose(mine, ref[0, :4], rtol=1e-5, atol=1e-6), (gap, mine, ref[0, :4])
    if gap >= 80:  # well past the e^-60 line
        assert np.isnan(mine).all()
