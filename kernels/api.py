"""docbeam's attention kernels: the public API and the contract every implementation keeps.

Import it as `from docbeam.kernels import api as kernels`. (The kernels/ folder has no
`__init__.py`, so that Hugging Face's `kernels` package, which transformers imports, wins over
this folder when a script runs from a checkout's root.)

Contract (every implementation, no exceptions): `attend(q, k, v, *, segment_ids, scale=None,
window=None) -> out`, written down as typed Protocols in `spec` (`Attend`; `AttendWindowed`
for the kernels whose spec says `windows=True`), one line per argument there. A result that
cannot be trusted is NaN, never a plausible wrong number.

Bidirectional (encoder) attention with packing: several documents may share a row, each
with its own id, and the ids need not be sorted. Accumulation is float32 (or wider) in
every implementation.

Implementations (one module each; names in `catalog`, `docbeam kernels` for what runs here):

    reference   einsum + float32 softmax, the oracle (float64 in, float64 math)
    native      jax.nn.dot_product_attention: XLA everywhere, cuDNN on GPU where dtype allows
    xla_fused   einsum attention arranged so XLA fuses the softmax into the matmuls (CPU's
                fastest); underflow gives NaN, which the encoder runtime catches and redoes
    flash       docbeam's Pallas kernel: blockwise online softmax, skips key blocks no
                query of the block can see (other segments, outside the window); interpret
                mode on CPU, compiled on GPU/TPU
    blockwise   plain XLA in query blocks: a window's slab of keys only, or one query block
                at a time for global layers; the compiled long-row path on CPU
    tpu_flash   adapter: JAX's Pallas TPU flash_attention
    splash      adapter: JAX's Pallas TPU splash attention
    gpu_mha     adapter: JAX's Pallas GPU (Triton) mha
    tokamax     adapter: tokamax.dot_product_attention (optional extra)

Callers use `kernels.get(name, platform=..., shape=..., dtype=..., mesh=..., window=...)` (or
`kernels.for_layers(name, windows=...)` for a model whose layers mix global and local
attention), never a module.
`kernels.names()` needs no JAX (the command line checks `--attention` before JAX loads);
everything else is loaded from `kernels.registry` on first use.
"""

from docbeam.kernels.catalog import names

_REGISTRY = {
    "Availability",
    "Choice",
    "KernelUnavailable",
    "LayerKernels",
    "Status",
    "available",
    "availability",
    "for_layers",
    "get",
    "report",
    "uncounted_cost",
}


def __getattr__(attr: str):
    if attr in _REGISTRY:
        from docbeam.kernels import registry

        return getattr(registry, attr)
    if attr == "platform_of_backend":
        from docbeam.kernels.spec import platform_of_backend

        return platform_of_backend
    raise AttributeError(f"module 'docbeam.kernels.api' has no attribute {attr!r}")


__all__ = ["names", *sorted(_REGISTRY | {"platform_of_backend"})]
