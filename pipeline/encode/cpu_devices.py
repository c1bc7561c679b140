"""A local CPU as several XLA devices, each batch's rows split over them.

XLA's CPU backend runs much of a transformer layer besides the matmuls (norms, softmax, the
fused elementwise work between them) on one thread: a 2,000-document run on 2 cores used
177% of the CPU. Split into two devices, each encoding its half of a batch's rows, both
cores stay busy: end to end 1.12x (uniform) and 1.07x (mixed corpus) the single device's
speed, 200 documents, median of 3 (`python -m tests.benchmarks.embed`, AMD EPYC, 2 cores,
AVX2). Beyond MAX_DEVICES more devices would need bigger batches (a row each at least) and
were not measured. JAX takes the count only before its backends start, so `job.prepare`
calls `split` before the planner starts them; CPU workers elsewhere keep one device (their
cores are not known at launch).
"""

import os

import jax

from docbeam.pipeline.core.flags import UsageError

MAX_DEVICES = 4
ENV = "DOCBEAM_CPU_DEVICES"  # 1: one device, as before this split


def wanted(cores: int | None = None) -> int:
    """Devices for this machine: DOCBEAM_CPU_DEVICES, else its usable cores up to MAX_DEVICES."""
    value = os.environ.get(ENV, "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise UsageError(f"{ENV} must be a whole number from 1 up, not {value!r}")
        return int(value)
    cores = cores or len(os.sched_getaffinity(0))
    return max(1, min(cores, MAX_DEVICES))


def split() -> None:
    """Split the CPU backend into `wanted()` devices if JAX has not started yet (afterwards it
    keeps what it has; so does an explicit --xla_force_host_platform_device_count)."""
    if "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", ""):
        return
    count = wanted()
    try:
        jax.config.update("jax_num_cpu_devices", count)
    except RuntimeError:  # backends already started: the batch is sized by what they have
        pass
