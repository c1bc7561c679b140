"""Pins the Pallas APIs docbeam relies on. If a JAX upgrade breaks one, it breaks here."""

import jax
import jax.numpy as jnp
import numpy as np

from kernels import pallas_compat as pc


def test_tested_jax_line():
    installed = ".".join(jax.__version__.split(".")[:2])
    tested = ".".join(pc.TESTED_JAX.split(".")[:2])
    assert installed == tested, f"jax {jax.__version__}: re-verify kernels/pallas_compat.py (tested {pc.TESTED_JAX})"


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


def test_tpu_interpret_mode_context():
    with pc.tpu_interpret_mode(True):
        pass
    with pc.tpu_interpret_mode(False):
        pass
