"""The names of docbeam's attention implementations, importable without JAX.

The command line validates `--attention` before JAX loads, so the list of names lives here,
apart from the registry that imports the implementations. Adding a kernel is one line here
and one module beside this file.
"""

# name -> module exporting KERNEL (a kernels.spec.KernelSpec)
KERNELS: dict[str, str] = {
    "reference": "kernels.reference",
    "native": "kernels.native",
    "xla_fused": "kernels.xla_fused",
    "flash": "kernels.flash",
    "blockwise": "kernels.blockwise",
    "tpu_flash": "kernels.tpu_flash",
    "splash": "kernels.splash",
    "gpu_mha": "kernels.gpu_mha",
    "tokamax": "kernels.tokamax_attention",
}


def names() -> list[str]:
    return list(KERNELS)
