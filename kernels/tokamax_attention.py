"""Adapter: tokamax.dot_product_attention (optional extra: `pip install docbeam[tokamax]`).

tokamax picks its own implementation per platform (Mosaic on TPU, Triton / Mosaic GPU on
GPU, XLA elsewhere); on CPU that is XLA, so it is checked here but not faster than native.
"""

import jax
import tokamax as upstream  # ImportError here = extra not installed: shows as unavailable
from absl import flags

# tokamax reads its config through absl flags and, on first use, parses sys.argv: inside
# any other program (docbeam's CLI, Beam workers, pytest) that fails on the host's own
# flags. Mark absl's flags parsed with their defaults, as a library should.
if not flags.FLAGS.is_parsed():
    flags.FLAGS.mark_as_parsed()

from docbeam.kernels.reference import segment_mask
from docbeam.kernels.spec import KernelSpec, padding_to_zeros


def attend(
    q: jax.Array, k: jax.Array, v: jax.Array, *, segment_ids: jax.Array, scale: float | None = None
) -> jax.Array:
    mask = segment_mask(segment_ids)[:, None, :, :]
    out = upstream.dot_product_attention(q, k, v, mask=mask, scale=scale)
    return padding_to_zeros(out, segment_ids)


KERNEL = KernelSpec(
    name="tokamax",
    attend=attend,
    windows=False,  # not wired: auto never picks it for windowed layers
    summary="tokamax.dot_product_attention (Mosaic TPU / Triton GPU; XLA on CPU)",
)
