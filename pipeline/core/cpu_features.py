"""What this CPU can do for bfloat16, read from its feature flags (Linux /proc/cpuinfo).

`--dtype auto` on a CPU decides from these, not from a speed measured on one machine: these
machines vary (one had AVX-512 BF16, another, sold under the same name, AVX2 only). bfloat16
with float32 accumulation can only pay where the CPU has bfloat16 dot-product instructions
(AVX-512 BF16's vdpbf16ps, or AMX tiles); elsewhere XLA widens every bfloat16 operand to
float32 first: float32's work plus conversions. No JAX here.
"""

import functools
import os
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
OVERRIDE = "DOCBEAM_CPU_FLAGS"  # space-separated flags read instead of /proc/cpuinfo's
# Flag -> what the reason says, best first (AMX runs whole bf16 tiles; AVX-512 BF16 dot products).
BF16_FLAGS = {"amx_bf16": "AMX (amx_bf16)", "avx512_bf16": "AVX-512 BF16 (avx512_bf16)"}
SIMD_FLAGS = ("avx512f", "avx2", "fma", "avx")  # named in a float32 reason: what the CPU has instead


def this_cpu() -> frozenset[str]:
    """This machine's CPU flags, or $DOCBEAM_CPU_FLAGS where set (to reproduce another machine's
    choice; the test suite pins it so its parity checks do not depend on the CI machine)."""
    pinned = os.environ.get(OVERRIDE)
    return frozenset(pinned.split()) if pinned is not None else cpuinfo_flags()


def pinned() -> bool:
    return os.environ.get(OVERRIDE) is not None


@functools.cache
def cpuinfo_flags() -> frozenset[str]:
    """The first `flags` (x86) or `Features` (Arm) line of /proc/cpuinfo; empty where there is
    none (not Linux)."""
    try:
        text = CPUINFO.read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return frozenset(line.partition(":")[2].split())
    return frozenset()


def cpu_name() -> str:
    """/proc/cpuinfo's model name ("?" where there is none)."""
    try:
        lines = CPUINFO.read_text().splitlines()
    except OSError:
        return "?"
    return next((ln.partition(":")[2].strip() for ln in lines if ln.startswith("model name")), "?")


def bf16_unit(flags: frozenset[str]) -> str | None:
    """The bfloat16 matrix feature among `flags`, as the reason names it; None without one."""
    return next((name for flag, name in BF16_FLAGS.items() if flag in flags), None)


def describe(flags: frozenset[str]) -> str:
    """The vector features a float32 reason names ("AVX2, FMA"), or that none could be read."""
    if not flags:
        return "no CPU flags readable"
    seen = [f.upper() for f in SIMD_FLAGS if f in flags]
    return ", ".join(seen) if seen else f"none of {', '.join(f.upper() for f in SIMD_FLAGS)}"
