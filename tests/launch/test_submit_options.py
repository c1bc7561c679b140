"""`docbeam submit` -> Dataflow options: exact values per accelerator, Beam round trip, errors."""

import re

import pytest
from apache_beam.options.pipeline_options import (
    DebugOptions,
    GoogleCloudOptions,
    PipelineOptions,
    SetupOptions,
    StandardOptions,
    WorkerOptions,
)

from docbeam.pipeline.launch.commands import submit

BASE = [
    "--project",
    "my-proj",
    "--region",
    "us-central1",
    "--temp-location",
    "gs://my-bucket/tmp",
    "--sdk-container-image",
    "us-central1-docker.pkg.dev/my-proj/docbeam/worker-tpu:0.1.0",
]
COMMON = {
    "runner": "DataflowRunner",
    "project": "my-proj",
    "region": "us-central1",
    "temp_location": "gs://my-bucket/tmp",
    "sdk_container_image": "us-central1-docker.pkg.dev/my-proj/docbeam/worker-tpu:0.1.0",
    "experiments": ["use_runner_v2", "no_use_multiple_sdk_containers"],
}

# (submit flags, machine_type, worker_accelerator service option)
HARDWARE = [
    (["--accelerator", "tpu-v5e"], "ct5lp-hightpu-1t", "worker_accelerator=type:tpu-v5-lite-podslice;topology:1x1"),
    (
        ["--accelerator", "tpu-v5e", "--topology", "1x1"],
        "ct5lp-hightpu-1t",
        "worker_accelerator=type:tpu-v5-lite-podslice;topology:1x1",
    ),
    (
        ["--accelerator", "tpu-v5e", "--topology", "2x2"],
        "ct5lp-hightpu-4t",
        "worker_accelerator=type:tpu-v5-lite-podslice;topology:2x2",
    ),
    (
        ["--accelerator", "tpu-v5e", "--topology", "2x4"],
        "ct5lp-hightpu-8t",
        "worker_accelerator=type:tpu-v5-lite-podslice;topology:2x4",
    ),
    (["--accelerator", "tpu-v6e"], "ct6e-standard-1t", "worker_accelerator=type:tpu-v6e-slice;topology:1x1"),
    (
        ["--accelerator", "tpu-v6e", "--topology", "2x4"],
        "ct6e-standard-8t",
        "worker_accelerator=type:tpu-v6e-slice;topology:2x4",
    ),
    (["--accelerator", "l4"], "g2-standard-4", "worker_accelerator=type:nvidia-l4;count:1;install-nvidia-driver"),
    (
        ["--accelerator", "l4", "--accelerator-count", "2"],
        "g2-standard-24",
        "worker_accelerator=type:nvidia-l4;count:2;install-nvidia-driver",
    ),
    (
        ["--accelerator", "a100"],
        "a2-highgpu-1g",
        "worker_accelerator=type:nvidia-tesla-a100;count:1;install-nvidia-driver",
    ),
    (
        ["--accelerator", "a100", "--accelerator-count", "8"],
        "a2-highgpu-8g",
        "worker_accelerator=type:nvidia-tesla-a100;count:8;install-nvidia-driver",
    ),
    (
        ["--accelerator", "h100"],
        "a3-highgpu-1g",
        "worker_accelerator=type:nvidia-h100-80gb;count:1;install-nvidia-driver",
    ),
    (
        ["--accelerator", "h100", "--accelerator-count", "8"],
        "a3-highgpu-8g",
        "worker_accelerator=type:nvidia-h100-80gb;count:8;install-nvidia-driver",
    ),
]
IDS = [" ".join(flags[1:]) for flags, _, _ in HARDWARE]


@pytest.mark.parametrize(("flags", "machine", "accel"), HARDWARE, ids=IDS)
def test_options_are_exactly_right_per_accelerator(flags, machine, accel):
    opts = submit.dataflow_options(submit.parse_submit_args(BASE + flags))
    assert opts == {**COMMON, "machine_type": machine, "dataflow_service_options": [accel]}


@pytest.mark.parametrize(("flags", "machine", "accel"), HARDWARE, ids=IDS)
def test_argv_round_trips_through_beam(flags, machine, accel):
    ns = submit.parse_submit_args(BASE + flags)
    parsed = PipelineOptions(submit.dataflow_argv(ns))
    # Everything Beam sees as set is exactly what dataflow_options resolved, nothing more.
    assert parsed.get_all_options(drop_default=True) == submit.dataflow_options(ns)
    gcp = parsed.view_as(GoogleCloudOptions)
    assert (gcp.project, gcp.region, gcp.temp_location) == ("my-proj", "us-central1", "gs://my-bucket/tmp")
    assert gcp.dataflow_service_options == [accel]
    worker = parsed.view_as(WorkerOptions)
    assert worker.machine_type == machine
    assert worker.sdk_container_image == COMMON["sdk_container_image"]
    debug = parsed.view_as(DebugOptions)
    assert debug.experiments == ["use_runner_v2", "no_use_multiple_sdk_containers"]
    assert debug.lookup_experiment("no_use_multiple_sdk_containers") is True
    assert parsed.view_as(StandardOptions).runner == "DataflowRunner"
    assert parsed.view_as(SetupOptions).sdk_location == "default"  # the container's SDK


def test_every_optional_flag_round_trips():
    flags = BASE + [
        "--accelerator",
        "tpu-v6e",
        "--topology",
        "2x2",
        "--staging-location",
        "gs://my-bucket/staging",
        "--service-account-email",
        "docbeam@my-proj.iam.gserviceaccount.com",
        "--network",
        "vpc-1",
        "--subnetwork",
        "regions/us-central1/subnetworks/sub-1",
        "--no-use-public-ips",
        "--max-num-workers",
        "4",
        "--job-name",
        "docbeam-2026-12-02",
    ]
    ns = submit.parse_submit_args(flags)
    opts = submit.dataflow_options(ns)
    assert opts == {
        **COMMON,
        "staging_location": "gs://my-bucket/staging",
        "service_account_email": "docbeam@my-proj.iam.gserviceaccount.com",
        "network": "vpc-1",
        "subnetwork": "regions/us-central1/subnetworks/sub-1",
        "use_public_ips": False,
        "max_num_workers": 4,
        "job_name": "docbeam-2026-12-02",
        "machine_type": "ct6e-standard-4t",
        "dataflow_service_options": ["worker_accelerator=type:tpu-v6e-slice;topology:2x2"],
    }
    parsed = PipelineOptions(submit.dataflow_argv(ns))
    assert parsed.get_all_options(drop_default=True) == opts
    worker = parsed.view_as(WorkerOptions)
    assert worker.use_public_ips is False and worker.max_num_workers == 4
    assert worker.subnetwork == "regions/us-central1/subnetworks/sub-1"
    gcp = parsed.view_as(GoogleCloudOptions)
    assert gcp.staging_location == "gs://my-bucket/staging" and gcp.job_name == "docbeam-2026-12-02"
    assert gcp.service_account_email == "docbeam@my-proj.iam.gserviceaccount.com"


def test_dry_run_resolves_without_project_and_lists_what_is_missing():
    ns = submit.parse_submit_args(["--accelerator", "tpu-v5e", "--dry-run"])
    assert submit.dataflow_options(ns)["machine_type"] == "ct5lp-hightpu-1t"
    assert submit.missing_required(ns) == ["--project", "--region", "--temp-location", "--sdk-container-image"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--accelerator", "l4", "--topology", "2x2"], "--topology applies to TPU accelerators only"),
        (["--accelerator", "tpu-v5e", "--accelerator-count", "2"], "--accelerator-count applies to GPUs"),
        (["--accelerator", "l4", "--accelerator-count", "3"], "l4 workers come with [1, 2, 4, 8] GPUs, not 3"),
        (["--accelerator", "tpu-v5e", "--temp-location", "/tmp/x"], "must be a gs:// path"),
        (["--accelerator", "tpu-v5e", "--job-name", "Docbeam_1"], "--job-name 'Docbeam_1'"),
        (["--accelerator", "tpu-v5e", "--max-num-workers", "0"], "at least 1"),
    ],
)
def test_bad_combinations_are_clear_errors(flags, message):
    # BASE's --temp-location comes first; a later one in `flags` wins, as argparse does.
    ns = submit.parse_submit_args(BASE + flags)
    with pytest.raises(submit.SubmitError, match=re.escape(message)):
        submit.dataflow_options(ns)


def test_missing_required_options_are_named_all_at_once():
    ns = submit.parse_submit_args(["--accelerator", "tpu-v5e", "--project", "p"])
    with pytest.raises(submit.SubmitError) as err:
        submit.dataflow_options(ns)
    assert str(err.value) == (
        "submitting to Dataflow needs --region, --temp-location, --sdk-container-image (or use --dry-run)"
    )


def test_unknown_accelerator_is_rejected_by_the_parser_and_by_the_function(capsys):
    with pytest.raises(SystemExit):
        submit.parse_submit_args(BASE + ["--accelerator", "tpu-v4"])
    assert "invalid choice: 'tpu-v4'" in capsys.readouterr().err
    ns = submit.parse_submit_args(BASE + ["--accelerator", "l4"])
    ns.accelerator = "tpu-v4"  # as a caller building the Namespace itself (e.g. from Airflow params)
    with pytest.raises(submit.SubmitError, match="unknown accelerator 'tpu-v4'; choose one of a100, a100-80gb, h100"):
        submit.dataflow_options(ns)


def test_every_option_name_is_a_beam_option():
    known = set(PipelineOptions([]).get_all_options())
    for flags, _, _ in HARDWARE:
        assert set(submit.dataflow_options(submit.parse_submit_args(BASE + flags))) <= known


def test_option_values_with_commas_are_refused_in_argv():
    # Beam splits experiments / dataflow_service_options on commas: such a value would not
    # round-trip, so it is an error rather than a silently different job.
    with pytest.raises(submit.SubmitError, match="must not contain a comma"):
        submit.options_to_argv({"experiments": ["a,b"]})


def _every_worker():
    from docbeam.pipeline.core.hardware import catalogue

    for name in catalogue().on_dataflow():
        acc = catalogue().get(name)
        for chips, worker in acc.workers.items():
            flags = ["--topology", worker.topology] if acc.kind == "tpu" else ["--accelerator-count", str(chips)]
            yield pytest.param(name, flags, id=f"{name}:{chips}")


@pytest.mark.parametrize(("name", "flags"), list(_every_worker()))
def test_billing_is_the_machine_launched(name, flags):
    """For every accelerator and count: the machine `submit` starts is the one the cost
    report bills, host vCPU and memory included (GPU) or excluded (TPU)."""
    from docbeam.pipeline.core.hardware import catalogue
    from docbeam.pipeline.cost.pricing import PriceTable, Rates

    ns = submit.parse_submit_args(BASE + ["--accelerator", name, *flags])
    launched = submit.dataflow_options(ns)["machine_type"]
    rates = Rates(PriceTable.load(), submit.hardware_spec(ns))
    assert rates.worker.machine_type == launched
    acc = catalogue().get(name)
    billed = {e["id"]: q for e, q in rates.lines}
    assert billed[acc.price_id] == rates.worker.chips
    if acc.kind == "tpu":
        assert set(billed) == {acc.price_id}  # Dataflow bills TPU workers per chip-hour only
    else:
        assert billed["dataflow_batch_vcpu_hour"] == rates.worker.vcpus
        assert billed["dataflow_batch_memory_gb_hour"] == rates.worker.memory_gb
    assert launched in rates.basis
