"""Pins the version-sensitive JAX APIs docbeam relies on (kernels/compat.py). If a JAX upgrade
breaks one, it breaks here, with the name of the API, not somewhere inside a kernel."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from docbeam.kernels import compat as pc


def test_tested_jax_line():
    installed = ".".join(jax.__version__.split(".")[:2])
    tested = ".".join(pc.TESTED_JAX.split(".")[:2])
    assert installed == tested, f"jax {jax.__version__}: re-verify kernels/compat.py (tested {pc.TESTED_JAX})"


def test_blockspec_grid_and_interpret_run_a_kernel():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0 + pc.program_id(0)

    x = jnp.arange(32.0).reshape(4, 8)
    out = pc.pallas_call(
        kernel,
        grid=(4,),
        in_specs=[pc.block_spec((None, 8), lambda i: (i, 0))],  # None squeezes the row dim
        out_specs=pc.block_spec((None, 8), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        interpret=pc.interpret("cpu"),
    )(x)
    assert np.array_equal(np.asarray(out), np.asarray(x * 2 + jnp.arange(4.0)[:, None]))


def test_ds_slices_inside_a_kernel():
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[pc.ds(2, 4)]

    out = pc.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((4,), jnp.float32), interpret=True)(jnp.arange(8.0))
    assert np.asarray(out).tolist() == [2.0, 3.0, 4.0, 5.0]


def test_compiler_params_exist_for_each_backend():
    assert pc.compiler_params("cpu") is None
    gpu = pc.compiler_params("gpu", num_warps=4, num_stages=2)
    assert gpu.num_warps == 4 and gpu.num_stages == 2
    tpu = pc.compiler_params("tpu", parallel_dims=3)
    assert tuple(tpu.dimension_semantics) == ("parallel",) * 3


def _tpu_style_call(x):
    # No interpret flag: on CPU this runs only when TPU interpret mode is forced.
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    return pc.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_tpu_interpret_mode_runs_a_tpu_kernel_on_cpu():
    """Guards the switch tpu_flash and splash use to run emulated on CPU (the conformance suite
    relies on it): inside it the kernel really runs; without it, CPU refuses the call."""
    with jax.default_device(jax.devices("cpu")[0]):  # the CPU's behaviour, on a GPU host too
        x = jnp.arange(8.0).reshape(1, 8)
        with pc.tpu_interpret_mode(True):
            out = _tpu_style_call(x)
        assert np.asarray(out).tolist() == [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]]
        with pc.tpu_interpret_mode(False), pytest.raises(Exception, match="(?i)interpret"):
            _tpu_style_call(x)


def test_shard_over_batch_runs_the_function_per_shard():
    """Guards the shard_map call every kernel runs under on a multi-device host: each device
    sees its own rows (here a one-device mesh, so all of them) and the result is reassembled."""
    from jax.sharding import Mesh

    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    seen = []

    def per_shard(a, b):
        seen.append(a.shape)
        return a * 2 + b

    fn = pc.shard_over_batch(per_shard, mesh, "data", n_batched=2)
    out = jax.jit(fn)(jnp.ones((4, 3)), jnp.arange(4.0)[:, None] * jnp.ones((4, 3)))
    assert seen == [(4, 3)] and np.asarray(out)[:, 0].tolist() == [2.0, 3.0, 4.0, 5.0]


def test_cost_analysis_is_one_dict_of_flops_and_bytes():
    exe = jax.jit(lambda a: a @ a).lower(jnp.ones((64, 64))).compile()
    cost = pc.cost_analysis(exe)
    assert cost["flops"] == pytest.approx(2 * 64**3, rel=0.01) and cost["bytes accessed"] > 0
