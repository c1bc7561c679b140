"""`docbeam submit` arguments -> Dataflow pipeline options, as pure functions.

The CLI, the Airflow DAG and the tests all go through `dataflow_options`, so a job
submitted by hand and one scheduled by Airflow get exactly the same options.

Sources for the values below (checked 2026-12):
- TPU types, topologies and the machine type each one requires:
  https://cloud.google.com/dataflow/docs/tpu/tpu-support
  ("use the worker_accelerator pipeline option formatted as type:TPU_TYPE;topology:TPU_TOPOLOGY";
  tpu-v5-lite-podslice 1x1/2x2/2x4 -> ct5lp-hightpu-1t/4t/8t, tpu-v6e-slice -> ct6e-standard-*t;
  single-host only; billed per TPU chip-hour, worker CPU and memory not billed).
- GPU syntax: https://cloud.google.com/dataflow/docs/gpu/use-l4-gpus
  (--machine_type=G2_MACHINE_TYPE
   --dataflow_service_options="worker_accelerator=type:nvidia-l4;count:N;install-nvidia-driver").
- GPU type names and the machine series that carry them (G2: L4, A2: A100, A3: H100):
  https://cloud.google.com/compute/docs/gpus
- One SDK process per VM: https://cloud.google.com/dataflow/docs/gpu/use-nvidia-mps
  ("--experiments=no_use_multiple_sdk_containers ... restricts Dataflow to a single Python
  process per VM") and https://cloud.google.com/dataflow/docs/concepts/gpu-support
  ("Dataflow launches one Apache Beam SDK process per VM core").
- Flag spellings and dest names: apache_beam/options/pipeline_options.py (Beam 2.77.0).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass


class SubmitError(ValueError):
    """A submit request that cannot be turned into a valid Dataflow job; one clear line."""


@dataclass(frozen=True)
class Tpu:
    service_type: str  # the worker_accelerator type Dataflow expects
    machine_prefix: str  # + "<chips>t" gives the machine type the topology requires


@dataclass(frozen=True)
class Gpu:
    service_type: str
    machine_by_count: dict[int, str]  # GPUs per worker -> the machine type that carries them


TPU_CHIPS = {"1x1": 1, "2x2": 4, "2x4": 8}  # single-host topologies Dataflow supports

ACCELERATORS: dict[str, Tpu | Gpu] = {
    "tpu-v5e": Tpu("tpu-v5-lite-podslice", "ct5lp-hightpu-"),
    "tpu-v6e": Tpu("tpu-v6e-slice", "ct6e-standard-"),
    # The smallest machine of each series that carries N GPUs: the pipeline runs one Python
    # process per worker (see EXPERIMENTS), so extra vCPUs would mostly idle.
    "l4": Gpu("nvidia-l4", {1: "g2-standard-4", 2: "g2-standard-24", 4: "g2-standard-48", 8: "g2-standard-96"}),
    "a100": Gpu(
        "nvidia-tesla-a100",
        {1: "a2-highgpu-1g", 2: "a2-highgpu-2g", 4: "a2-highgpu-4g", 8: "a2-highgpu-8g", 16: "a2-megagpu-16g"},
    ),
    "h100": Gpu("nvidia-h100-80gb", {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"}),
}

# Model sharing. Dataflow starts one SDK process per vCPU (24 on ct5lp-hightpu-1t). libtpu
# lets one process own a host's chips ("The TPU is already in use by process with pid N"), and
# JAX pre-allocates most GPU memory per process, so a second process on the same VM fails or
# OOMs. One SDK process per worker owns every chip; its threads share one model (RunInference
# loads one copy per process); the model must spread each batch over jax.local_devices().
# use_runner_v2: custom containers (required for TPU) run only on Runner v2.
EXPERIMENTS = ("use_runner_v2", "no_use_multiple_sdk_containers")

REQUIRED = ("project", "region", "temp_location", "sdk_container_image")

# Dataflow job names: lowercase letter first, then lowercase letters, digits and hyphens.
JOB_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def add_submit_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags of `docbeam submit` (the job's own flags, --input etc., are the CLI's)."""
    g = parser.add_argument_group("Dataflow submission")
    g.add_argument(
        "--accelerator", required=True, choices=sorted(ACCELERATORS), help="worker accelerator: TPU slice or NVIDIA GPU"
    )
    g.add_argument(
        "--topology", choices=sorted(TPU_CHIPS), help="TPU only: chips per worker, 1x1 (default), 2x2 or 2x4"
    )
    g.add_argument(
        "--accelerator-count", type=int, dest="accelerator_count", help="GPU only: GPUs per worker (default 1)"
    )
    g.add_argument("--project", help="Google Cloud project id")
    g.add_argument("--region", help="Dataflow region, e.g. us-central1")
    g.add_argument("--temp-location", dest="temp_location", metavar="GS_PATH", help="gs:// folder for temporary files")
    g.add_argument(
        "--staging-location",
        dest="staging_location",
        metavar="GS_PATH",
        help="gs:// folder for staged files (default: under --temp-location)",
    )
    g.add_argument(
        "--sdk-container-image",
        dest="sdk_container_image",
        metavar="IMAGE",
        help="worker image built from infra/dataflow (required: TPU and GPU workers need a custom container)",
    )
    g.add_argument("--service-account-email", dest="service_account_email", help="worker service account")
    g.add_argument("--network", help="VPC network for the workers")
    g.add_argument("--subnetwork", help="subnetwork, regions/REGION/subnetworks/NAME or a URL")
    g.add_argument(
        "--no-use-public-ips",
        dest="no_use_public_ips",
        action="store_true",
        help="workers get private IPs only (the subnetwork needs Private Google Access)",
    )
    g.add_argument(
        "--max-num-workers",
        dest="max_num_workers",
        type=int,
        help="autoscaling ceiling, in workers (each worker = one accelerator host)",
    )
    g.add_argument("--job-name", dest="job_name", help="Dataflow job name ([a-z][-a-z0-9]*)")
    g.add_argument(
        "--dry-run", dest="dry_run", action="store_true", help="print the resolved options and submit nothing"
    )


def parse_submit_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse submit flags alone (the DAG and the tests use this; the CLI has its own parser)."""
    parser = argparse.ArgumentParser(prog="docbeam submit", add_help=False)
    add_submit_args(parser)
    return parser.parse_args(list(argv))


def missing_required(ns: argparse.Namespace) -> list[str]:
    """Options a real submission needs that `ns` lacks, as flag names."""
    return ["--" + k.replace("_", "-") for k in REQUIRED if not getattr(ns, k, None)]


def accelerator_options(ns: argparse.Namespace) -> dict[str, object]:
    """machine_type + the worker_accelerator service option for the requested hardware."""
    name = getattr(ns, "accelerator", None)
    acc = ACCELERATORS.get(name or "")
    if acc is None:
        raise SubmitError(f"unknown accelerator {name!r}; choose one of {', '.join(sorted(ACCELERATORS))}")
    topology, count = getattr(ns, "topology", None), getattr(ns, "accelerator_count", None)
    if isinstance(acc, Tpu):
        if count is not None:
            raise SubmitError(f"--accelerator-count applies to GPUs; for {name} choose --topology")
        topology = topology or "1x1"
        if topology not in TPU_CHIPS:
            raise SubmitError(f"unknown TPU topology {topology!r}; choose one of {', '.join(TPU_CHIPS)}")
        machine = f"{acc.machine_prefix}{TPU_CHIPS[topology]}t"
        accel = f"worker_accelerator=type:{acc.service_type};topology:{topology}"
    else:
        if topology is not None:
            raise SubmitError(f"--topology applies to TPU accelerators only, not {name}")
        count = 1 if count is None else count
        if count not in acc.machine_by_count:
            raise SubmitError(f"{name} workers come with {sorted(acc.machine_by_count)} GPUs, not {count}")
        machine = acc.machine_by_count[count]
        accel = f"worker_accelerator=type:{acc.service_type};count:{count};install-nvidia-driver"
    return {"machine_type": machine, "dataflow_service_options": [accel]}


def hardware_spec(ns: argparse.Namespace) -> str:
    """The --hardware the cost report prices the job as: NAME:CHIPS per worker, e.g. tpu-v5e:4."""
    accelerator_options(ns)  # validates
    acc = ACCELERATORS[ns.accelerator]
    if isinstance(acc, Tpu):
        return f"{ns.accelerator}:{TPU_CHIPS[ns.topology or '1x1']}"
    return f"{ns.accelerator}:{ns.accelerator_count or 1}"


def _check(ns: argparse.Namespace, opts: dict[str, object]) -> None:
    if not getattr(ns, "dry_run", False):
        missing = missing_required(ns)
        if missing:
            raise SubmitError(f"submitting to Dataflow needs {', '.join(missing)} (or use --dry-run)")
    for key in ("temp_location", "staging_location"):
        value = opts.get(key)
        if value is not None and not str(value).startswith("gs://"):
            raise SubmitError(f"--{key.replace('_', '-')} must be a gs:// path, got {value!r}")
    job_name = opts.get("job_name")
    if job_name is not None and not JOB_NAME.fullmatch(str(job_name)):
        raise SubmitError(f"--job-name {job_name!r}: use lowercase letters, digits and hyphens, starting with a letter")
    workers = opts.get("max_num_workers")
    if isinstance(workers, int) and workers < 1:
        raise SubmitError(f"--max-num-workers must be at least 1, got {workers}")
    _check_beam_names(opts)


def _check_beam_names(opts: dict[str, object]) -> None:
    # Imported here, not at module level: the Airflow scheduler imports nothing of Beam, and
    # this check is the only reason this module needs Beam at all.
    from apache_beam.options.pipeline_options import PipelineOptions

    known = set(PipelineOptions([]).get_all_options())
    unknown = sorted(set(opts) - known)
    if unknown:  # a typo here would be silently ignored by Dataflow
        raise SubmitError(f"not Beam pipeline options: {unknown}")


def dataflow_options(ns: argparse.Namespace) -> dict[str, object]:
    """The Beam pipeline options (dest name -> value) a submission resolves to.

    Unset optional flags are left out, so Beam/Dataflow defaults apply to them.
    """
    opts: dict[str, object] = {"runner": "DataflowRunner"}
    for key in (
        "project",
        "region",
        "temp_location",
        "staging_location",
        "sdk_container_image",
        "service_account_email",
        "network",
        "subnetwork",
        "max_num_workers",
        "job_name",
    ):
        value = getattr(ns, key, None)
        if value is not None:
            opts[key] = value
    if getattr(ns, "no_use_public_ips", False):
        opts["use_public_ips"] = False
    opts.update(accelerator_options(ns))
    opts["experiments"] = list(EXPERIMENTS)
    _check(ns, opts)
    return opts


def options_to_argv(opts: dict[str, object]) -> list[str]:
    """Beam command-line flags for an options dict; PipelineOptions parses them back to it."""
    argv: list[str] = []
    for key, value in opts.items():
        if isinstance(value, bool):
            # Beam's flag for use_public_ips=False is --no_use_public_ips (same dest).
            argv.append(f"--{key}" if value else f"--no_{key}")
        elif isinstance(value, list):
            for item in value:
                # experiments and dataflow_service_options split on commas when parsed.
                if "," in str(item):
                    raise SubmitError(f"--{key} value {item!r} must not contain a comma")
                argv.append(f"--{key}={item}")
        else:
            argv.append(f"--{key}={value}")
    return argv


def dataflow_argv(ns: argparse.Namespace) -> list[str]:
    """`dataflow_options(ns)` as command-line flags."""
    return options_to_argv(dataflow_options(ns))
