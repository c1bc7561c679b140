"""The names of docbeam's attention implementations, importable without JAX.

The command line validates `--attention` before JAX loads, so the list of names lives here,
apart from the registry that imports the implementations. Adding a kernel is one line here
and one module beside this file.
"""

# name -> module exporting KERNEL (a kernels.spec.KernelSpec)
KERNELS: dict[str, str] = {
    "reference": "docbeam.kernels.reference",
    "native": "docbeam.kernels.native",
    "xla_fused": "docbeam.kernels.xla_fused",
    "flash": "docbeam.kernels.flash",
    "blockwise": "docbeam.kernels.blockwise",
    "tpu_flash": "docbeam.kernels.tpu_flash",
    "splash": "docbeam.kernels.splash",
    "gpu_mha": "docbeam.kernels.gpu_mha",
    "tokamax": "docbeam.kernels.tokamax_attention",
}


# name -> (the module an optional extra provides, that extra): a kernel whose module is missing
# says how to install it instead of an import error.
EXTRAS: dict[str, tuple[str, str]] = {"tokamax": ("tokamax", "tokamax")}


def names() -> list[str]:
    return list(KERNELS)
