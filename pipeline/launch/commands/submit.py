"""`docbeam submit` arguments -> Dataflow pipeline options, as pure functions.

The CLI, the Airflow DAG and the tests all go through `dataflow_options`, so a job
submitted by hand and one scheduled by Airflow get exactly the same options.

Which machine carries which accelerator is the hardware catalogue's
(pipeline/data/hardware.yaml), the same one the cost report bills from. Option syntax
(checked 2026-12):
- TPU: https://cloud.google.com/dataflow/docs/tpu/tpu-support ("use the worker_accelerator
  pipeline option formatted as type:TPU_TYPE;topology:TPU_TOPOLOGY"; single-host only).
- GPU: https://cloud.google.com/dataflow/docs/gpu/use-l4-gpus (--machine_type=G2_MACHINE_TYPE
  --dataflow_service_options="worker_accelerator=type:nvidia-l4;count:N;install-nvidia-driver").
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

from docbeam.pipeline.core.beam_flags import BEAM_FLAGS
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.hardware import HardwareError, catalogue


class SubmitError(UsageError):
    """A submit request that cannot be turned into a valid Dataflow job; one clear line."""


# Model sharing. Dataflow starts one SDK process per vCPU (24 on ct5lp-hightpu-1t). libtpu
# lets one process own a host's chips ("The TPU is already in use by process with pid N"), and
# JAX pre-allocates most GPU memory per process, so a second process on the same VM fails or
# OOMs. One SDK process per worker owns every chip; its threads share one model (RunInference
# loads one copy per process); the model must spread each batch over jax.local_devices().
# The worker's other cores parse and chunk in its host pool (graph.host_pool; --host-processes).
# use_runner_v2: custom containers (required for TPU) run only on Runner v2.
EXPERIMENTS = ("use_runner_v2", "no_use_multiple_sdk_containers")

REQUIRED = ("project", "region", "temp_location", "sdk_container_image")

# Dataflow job names: lowercase letter first, then lowercase letters, digits and hyphens.
JOB_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")


def add_submit_args(parser: argparse.ArgumentParser) -> None:
    """Add the flags of `docbeam submit` (the job's own flags, --input etc., are the CLI's)."""
    g = parser.add_argument_group("Dataflow submission")
    g.add_argument(
        "--accelerator",
        required=True,
        choices=catalogue().on_dataflow(),
        help="worker accelerator: TPU slice or NVIDIA GPU (pipeline/data/hardware.yaml)",
    )
    g.add_argument("--topology", help="TPU only: chips per worker, 1x1 (default), 2x2 or 2x4")
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
    g.add_argument(
        "--skip-compile-check",
        dest="skip_compile_check",
        action="store_true",
        help="TPU: submit without first compiling every batch shape for the workers' chips here "
        "(`docbeam compile`; needs the tpu extra)",
    )


def parse_submit_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse submit flags alone (the DAG and the tests use this; the CLI has its own parser)."""
    parser = argparse.ArgumentParser(prog="docbeam submit", add_help=False)
    add_submit_args(parser)
    return parser.parse_args(list(argv))


def missing_required(ns: argparse.Namespace) -> list[str]:
    """Options a real submission needs that `ns` lacks, as flag names."""
    return ["--" + k.replace("_", "-") for k in REQUIRED if not getattr(ns, k, None)]


def _worker(ns: argparse.Namespace):
    """The accelerator and the worker machine a request stands for (one catalogue for all)."""
    name = getattr(ns, "accelerator", None)
    if name not in catalogue().on_dataflow():
        raise SubmitError(f"unknown accelerator {name!r}; choose one of {', '.join(catalogue().on_dataflow())}")
    acc = catalogue().get(name)
    topology, count = getattr(ns, "topology", None), getattr(ns, "accelerator_count", None)
    try:
        if acc.kind == "tpu":
            if count is not None:
                raise SubmitError(f"--accelerator-count applies to GPUs; for {name} choose --topology")
            return acc, acc.by_topology(topology or "1x1")
        if topology is not None:
            raise SubmitError(f"--topology applies to TPU accelerators only, not {name}")
        return acc, acc.worker(1 if count is None else count)
    except HardwareError as exc:
        raise SubmitError(str(exc)) from exc


def accelerator_options(ns: argparse.Namespace) -> dict[str, object]:
    """machine_type + the worker_accelerator service option for the requested hardware."""
    acc, worker = _worker(ns)
    if acc.kind == "tpu":
        accel = f"worker_accelerator=type:{acc.dataflow_type};topology:{worker.topology}"
    else:
        accel = f"worker_accelerator=type:{acc.dataflow_type};count:{worker.chips};install-nvidia-driver"
    return {"machine_type": worker.machine_type, "dataflow_service_options": [accel]}


def hardware_spec(ns: argparse.Namespace) -> str:
    """The --hardware the cost report prices the job as: NAME:CHIPS per worker, e.g. tpu-v5e:4."""
    acc, worker = _worker(ns)
    return f"{acc.name}:{worker.chips}"


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
    # Beam's option names from the table the command line uses: the Airflow scheduler (and a
    # mistyped `docbeam submit`) never has to import Beam to check them.
    known = {dest for dest, _ in BEAM_FLAGS.values()}
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
