import pytest

from docbeam.kernels import api as kernels
from docbeam.kernels import registry

SHAPE = (32, 256, 12, 32)


@pytest.mark.parametrize("platform", ["cpu", "gpu", "tpu"])
@pytest.mark.parametrize("seq", [16, 100, 128, 256, 2048])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_auto_never_fails_and_says_why(platform, seq, dtype):
    choice = kernels.get("auto", platform=platform, shape=(8, seq, 12, 32), dtype=dtype)
    assert choice.requested == "auto" and choice.name in kernels.names()
    assert choice.reason.startswith(f"{choice.name}: ") and len(choice.reason) > 20


def test_auto_rules():
    assert kernels.get("auto", platform="cpu", shape=SHAPE).name == "xla_fused"
    assert kernels.get("auto", platform="tpu", shape=SHAPE).name == "splash"
    assert kernels.get("auto", platform="tpu", shape=(32, 200, 12, 32)).name == "native"
    assert kernels.get("auto", platform="gpu", shape=SHAPE, dtype="bfloat16").name == "native"
    assert kernels.get("auto", platform="gpu", shape=(8, 512, 12, 64), dtype="bfloat16").name == "flash"
    assert kernels.get("auto", platform="gpu", shape=(8, 512, 12, 64), dtype="float32").name == "native"
    assert kernels.get("auto", platform="gpu", shape=(8, 4096, 12, 64), dtype="float32").name == "gpu_mha"
    tpu = kernels.get("auto", platform="tpu", shape=SHAPE)
    assert "T=256 divisible by block 128" in tpu.reason


def test_explicit_request_that_cannot_run_is_a_clear_error():
    with pytest.raises(kernels.KernelUnavailable) as err:
        kernels.get("tpu_flash", platform="gpu", shape=SHAPE)
    msg = str(err.value)
    assert "tpu_flash" in msg and "TPU-only" in msg and "Runs here:" in msg and "native" in msg


def test_unknown_name_lists_the_choices():
    with pytest.raises(kernels.KernelUnavailable, match="choose one of: auto, reference, native"):
        kernels.get("magic", platform="cpu")


def test_flash_on_cpu_says_it_is_interpreted():
    choice = kernels.get("flash", platform="cpu", shape=SHAPE)
    assert choice.name == "flash" and "interpret mode" in choice.reason


def test_report_lists_every_implementation():
    rows = kernels.report("cpu", SHAPE)
    assert [r["name"] for r in rows] == kernels.names()
    flash = next(r for r in rows if r["name"] == "flash")
    assert flash["available"] and flash["status"] == "emulated" and "interpret mode" in flash["note"]
    native = next(r for r in rows if r["name"] == "native")
    assert native["available"] and native["status"] == "runs"


def test_broken_adapter_is_unavailable_not_fatal(monkeypatch):
    monkeypatch.setitem(registry.KERNELS, "broken", "docbeam.kernels.does_not_exist")
    avail = registry.availability("broken", "cpu")
    assert avail.status is kernels.Status.NOT_IMPORTABLE and "cannot import" in avail.reason and not avail.usable
    assert "broken" not in kernels.available("cpu")
    assert kernels.get("auto", platform="cpu").name == "xla_fused"


@pytest.mark.parametrize(
    "shape, dtype, message",
    [((32, 256, 12), "float32", "expected \\[batch, seq, heads, head_dim\\]"), (SHAPE, "bf16", "not a dtype")],
)
def test_bad_shapes_and_dtypes_are_refused_once_at_the_registry(shape, dtype, message):
    with pytest.raises(ValueError, match=message):
        kernels.get("native", platform="cpu", shape=shape, dtype=dtype)


def test_mismatched_arrays_are_a_clear_error_for_every_kernel():
    import jax.numpy as jnp

    attend = kernels.get("reference", platform="cpu").attend
    q = jnp.ones((1, 8, 2, 4))
    with pytest.raises(ValueError, match="segment_ids be \\[batch, seq\\]"):
        attend(q, q, q, segment_ids=jnp.ones((1, 9), jnp.int32))


def test_the_names_need_no_jax():
    import subprocess
    import sys

    code = (
        "import sys; from docbeam.kernels import api; assert api.names()[0] == 'reference'; print('jax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_calls_are_named_for_the_profiler():
    import jax
    import jax.numpy as jnp

    attend = kernels.get("native", platform="cpu").attend
    x = jnp.ones((1, 8, 2, 4))
    hlo = jax.jit(lambda a: attend(a, a, a, segment_ids=jnp.ones((1, 8), jnp.int32))).lower(x).as_text(debug_info=True)
    assert "attention_native" in hlo


@pytest.mark.parametrize("platform", ["cpu", "gpu", "tpu"])
@pytest.mark.parametrize("seq", [128, 512, 1024, 2048, 4096, 8192])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_auto_for_windowed_layers_never_picks_a_kernel_without_windows(platform, seq, dtype):
    choice = kernels.get("auto", platform=platform, shape=(1, seq, 12, 64), dtype=dtype, window=64)
    assert kernels.availability(choice.name, platform, (1, seq, 12, 64), dtype, window=64).usable
    assert "window 64" in choice.reason and f"T={seq}" in choice.reason


def test_auto_at_long_rows_on_cpu():
    """Dense scores at T=8192 would be ~3 GB per row per layer: the blockwise path takes over."""
    local = kernels.get("auto", platform="cpu", shape=(1, 8192, 12, 64), window=64)
    assert local.name == "blockwise" and "inside the window" in local.reason
    assert kernels.get("auto", platform="cpu", shape=(1, 8192, 12, 64)).name == "blockwise"
    assert kernels.get("auto", platform="cpu", shape=(16, 512, 12, 64), window=64).name == "xla_fused"
    gpu_local = kernels.get("auto", platform="gpu", shape=(1, 8192, 12, 64), dtype="bfloat16", window=64)
    assert gpu_local.name == "flash"
    assert kernels.get("auto", platform="gpu", shape=(1, 8192, 12, 64), dtype="float32", window=64).name == "blockwise"


def test_explicit_kernel_without_windows_is_refused_for_windowed_layers():
    with pytest.raises(kernels.KernelUnavailable, match="no local window") as err:
        kernels.get("splash", platform="tpu", shape=(1, 4096, 12, 64), window=64)
    assert "blockwise" in str(err.value) and "native" in str(err.value)


def test_a_global_only_choice_refuses_a_window_at_trace_time():
    import jax.numpy as jnp

    pytest.importorskip("tokamax")  # the test extra installs it; the lent GPU machine has none
    attend = kernels.get("tokamax", platform="cpu").attend
    x = jnp.ones((1, 8, 2, 4))
    with pytest.raises(kernels.KernelUnavailable, match="takes no local window"):
        attend(x, x, x, segment_ids=jnp.ones((1, 8), jnp.int32), window=2)


def test_layer_kernels_route_by_window():
    import jax.numpy as jnp
    import numpy as np

    layers = kernels.for_layers("auto", windows=(None, 3, None), platform="cpu", shape=(1, 32, 2, 4))
    assert set(layers.choices) == {None, 3} and layers.name == "xla_fused"
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal((1, 32, 2, 4)), jnp.float32) for _ in range(3))
    seg = jnp.ones((1, 32), jnp.int32)
    ref = kernels.get("reference").attend
    for w in (None, 3):
        got = layers.attend(q, k, v, segment_ids=seg, window=w)
        assert np.allclose(got, ref(q, k, v, segment_ids=seg, window=w), atol=1e-5)
