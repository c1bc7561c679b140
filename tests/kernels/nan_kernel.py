"""A test double: an attention implementation that always flags its result (NaN)."""

import jax.numpy as jnp

from docbeam.kernels.spec import KernelSpec

KERNEL = KernelSpec(
    name="nan_test",
    attend=lambda q, k, v, *, segment_ids, scale=None: jnp.full_like(q, jnp.nan),
    summary="test double: always NaN",
)
