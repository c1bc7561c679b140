"""docbeam under Airflow 3: a daily Dataflow job (TPU or GPU workers) and a local variant.

docbeam_dataflow  resolve -> run_dataflow -> wait_for_job -> finalize
    resolve       turns the run's params into exactly the options `docbeam submit` would use
                  (pipeline.launch.submit.dataflow_options) plus the job's own flags and, with
                  reuse_previous, `--reuse` of the last good output (ROOT/_latest); finds run.py
    run_dataflow  BeamRunPythonPipelineOperator: `python pipeline/run.py ...` with
                  DataflowRunner; returns once Dataflow has the job, pushes `dataflow_job_id`
    wait_for_job  DataflowJobStatusSensor on that id until JOB_STATE_DONE (reschedule mode,
                  so no worker slot is held while the job runs)
    finalize      docbeam.pipeline.finalize: the operator does not wait for pipeline/run.py after the
                  job id appears, so the run's own finalisation (commit, accounting check,
                  _manifest.json, _cost/) runs here, from the job's Dataflow counters; it
                  applies the run's verdict (the task fails on too many rejections) and only
                  a good run becomes ROOT/_latest
docbeam_local     resolve_local -> run_local -> mark_latest: the same entry point on the
                  DirectRunner, whose launcher applies the verdict itself

Inputs and outputs are per run date: gs://BUCKET/INPUT_PREFIX/{{ ds }}/* ->
gs://BUCKET/OUTPUT_PREFIX/{{ ds }}. Project, region, bucket, accelerator and image come from
the DAG's params (defaults below, overridable per run), not from code.

Why docbeam is imported inside the tasks and not here: the scheduler parses this file
often and with a timeout; importing docbeam pulls in Beam (and JAX), seconds per parse, and
the scheduler's environment need not have them at all. The workers that run these tasks
need docbeam installed anyway (they launch pipeline/run.py), so the `resolve` task calls
pipeline.submit there, and the scheduler only needs Airflow and the two providers.

The interpreter that runs pipeline/run.py is $DOCBEAM_PYTHON (default python3): the
operator's py_interpreter is not a templated field, so it cannot be a param.
"""

from __future__ import annotations

import os
from pathlib import Path

import pendulum
from airflow.providers.apache.beam.operators.beam import BeamRunPythonPipelineOperator
from airflow.providers.google.cloud.hooks.dataflow import DataflowJobStatus
from airflow.providers.google.cloud.sensors.dataflow import DataflowJobStatusSensor
from airflow.sdk import DAG, Param, task

PYTHON = os.environ.get("DOCBEAM_PYTHON", "python3")
# The repo this file lives in, for the local DAG's sample input (deployed DAG folders that
# are not inside a checkout simply override the param).
REPO = Path(__file__).resolve().parents[3]

# Params shared by both DAGs: the job's own flags.
JOB_PARAMS = {
    "attention": Param("auto", type="string", description="attention kernel (see `docbeam kernels`)"),
    "extract": Param("", type="string", description="comma-separated extractors, or empty"),
    "max_seq_len": Param(
        None, type=["null", "integer"], minimum=8, description="tokens per window; default: the checkpoint's own"
    ),
    # Daily reruns of a date must replace that date's outputs, not refuse to start.
    "overwrite": Param(True, type="boolean", description="replace outputs of an earlier run"),
    # Each day's input is the whole corpus (a snapshot, not a delta): documents unchanged since
    # the last good run (ROOT/_latest) are copied, not encoded again.
    "reuse_previous": Param(True, type="boolean", description="--reuse the last successful run's output"),
}

DATAFLOW_PARAMS = {
    "project": Param("my-gcp-project", type="string", description="Google Cloud project id"),
    "region": Param("us-central1", type="string", description="Dataflow region"),
    "bucket": Param("my-docbeam-bucket", type="string", description="GCS bucket, no gs://"),
    "input_prefix": Param("docs", type="string", description="inputs: gs://BUCKET/PREFIX/{ds}/*"),
    "output_prefix": Param("docbeam", type="string", description="outputs: gs://BUCKET/PREFIX/{ds}"),
    "accelerator": Param("tpu-v5e", enum=["tpu-v5e", "tpu-v6e", "l4", "a100", "a100-80gb", "h100"]),
    "topology": Param(
        None, type=["null", "string"], enum=[None, "1x1", "2x2", "2x4"], description="TPU only (default 1x1)"
    ),
    "accelerator_count": Param(None, type=["null", "integer"], description="GPU only (default 1)"),
    "image": Param(
        "us-central1-docker.pkg.dev/my-gcp-project/docbeam/docbeam-worker-tpu:latest",
        type="string",
        description="worker container (infra/dataflow/build_and_push.sh)",
    ),
    "max_num_workers": Param(4, type=["null", "integer"], minimum=1),
    "service_account_email": Param(None, type=["null", "string"]),
    "subnetwork": Param(None, type=["null", "string"]),
    "no_use_public_ips": Param(False, type="boolean"),
    "compile_check": Param(
        True,
        type="boolean",
        description="TPU: compile every batch shape for the workers' chips before submitting, as `docbeam submit` "
        "does (needs the tpu extra where the task runs)",
    ),
    **JOB_PARAMS,
}

LOCAL_PARAMS = {
    "input": Param(str(REPO / "samples" / "docs" / "*"), type="string", description="input glob"),
    "output_root": Param("/tmp/docbeam-local", type="string", description="outputs: ROOT/{ds}"),
    **JOB_PARAMS,
}

# Flags of `docbeam submit`, by the param that feeds them.
SUBMIT_FLAGS = {
    "accelerator": "--accelerator",
    "topology": "--topology",
    "accelerator_count": "--accelerator-count",
    "project": "--project",
    "region": "--region",
    "image": "--sdk-container-image",
    "max_num_workers": "--max-num-workers",
    "service_account_email": "--service-account-email",
    "subnetwork": "--subnetwork",
}


def submit_argv(params: dict) -> list[str]:
    """The `docbeam submit` flags these params stand for."""
    argv: list[str] = []
    for key, flag in SUBMIT_FLAGS.items():
        if params.get(key) is not None:
            argv += [flag, str(params[key])]
    bucket = params["bucket"]
    argv += ["--temp-location", f"gs://{bucket}/tmp", "--staging-location", f"gs://{bucket}/staging"]
    if params.get("no_use_public_ips"):
        argv.append("--no-use-public-ips")
    return argv


def job_options(params: dict, input_glob: str, output: str) -> dict:
    """The job's own flags (DocbeamOptions dest names), as Beam options."""
    opts: dict = {"input": input_glob, "output": output, "attention": params["attention"]}
    if params.get("max_seq_len") is not None:  # unset: the window the checkpoint was trained on
        opts["max_seq_len"] = params["max_seq_len"]
    if params.get("extract"):
        opts["extract"] = params["extract"]
    if params.get("overwrite"):
        opts["overwrite"] = True
    return opts


def compile_guard(job: dict, hardware: str) -> None:
    """`docbeam submit`'s TPU guard: the encoder compiled for the workers' chips here, before
    anything is billed; the task fails when a batch shape does not lower or fit."""
    from docbeam.pipeline.launch.commands.compile_check import check_job

    if not check_job(job, hardware):
        raise RuntimeError(f"the encoder does not compile or fit on {hardware} (see the log); nothing was submitted")


def run_py_file() -> str:
    """pipeline/run.py of the docbeam installed where the task runs."""
    import importlib.util

    spec = importlib.util.find_spec("docbeam.pipeline.run")
    if spec is None or spec.origin is None:
        raise RuntimeError("docbeam is not importable on this Airflow worker (docbeam.pipeline.run)")
    return spec.origin


class _DataflowJobStatusSensor(DataflowJobStatusSensor):
    # The provider templates only job_id; project and region come from this run's params.
    template_fields = (*DataflowJobStatusSensor.template_fields, "project_id", "location")


with DAG(
    dag_id="docbeam_dataflow",
    description="Embed the day's documents with docbeam on Dataflow (TPU or GPU workers)",
    schedule="@daily",
    start_date=pendulum.datetime(2026, 12, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    params=DATAFLOW_PARAMS,
    tags=["docbeam"],
) as dataflow_dag:

    @task(multiple_outputs=True)
    def resolve(params: dict | None = None, ds: str | None = None) -> dict:
        from docbeam.pipeline.launch.commands import submit

        ns = submit.parse_submit_args(submit_argv(params))
        from docbeam.pipeline.launch.after_run import latest

        bucket = params["bucket"]
        root = f"gs://{bucket}/{params['output_prefix']}"
        job = job_options(params, f"gs://{bucket}/{params['input_prefix']}/{ds}/*", f"{root}/{ds}")
        if params.get("reuse_previous"):
            job.update(latest.reuse_flags(root, job["output"]))
        options = {**job, **submit.dataflow_options(ns), "hardware": submit.hardware_spec(ns)}
        if params.get("compile_check", True) and options["hardware"].startswith("tpu-"):
            compile_guard(job, options["hardware"])
        return {"py_file": run_py_file(), "pipeline_options": options, "output": job["output"], "root": root}

    resolved = resolve()
    run_dataflow = BeamRunPythonPipelineOperator(
        task_id="run_dataflow",
        runner="DataflowRunner",
        py_file=resolved["py_file"],
        pipeline_options=resolved["pipeline_options"],
        py_interpreter=PYTHON,
        # A dict, so that every value is rendered (DataflowConfiguration templates only
        # job_name and location); the operator turns it into a DataflowConfiguration.
        dataflow_config={
            "job_name": "docbeam-{{ ds_nodash }}",  # + a unique suffix (append_job_name)
            "project_id": "{{ params.project }}",
            "location": "{{ params.region }}",
            # Return once the job runs; the sensor below waits without holding a slot.
            "wait_until_finished": False,
        },
    )
    wait_for_job = _DataflowJobStatusSensor(
        task_id="wait_for_job",
        job_id="{{ ti.xcom_pull(task_ids='run_dataflow', key='dataflow_job_id') }}",
        expected_statuses={DataflowJobStatus.JOB_STATE_DONE},
        project_id="{{ params.project }}",
        location="{{ params.region }}",
        mode="reschedule",
        poke_interval=120,
        timeout=24 * 3600,
    )

    @task
    def finalize(output: str, root: str, ti=None) -> dict:
        from docbeam.pipeline.launch.after_run import latest
        from docbeam.pipeline.launch.commands.dataflow_finish import finalize_dataflow

        job_id = ti.xcom_pull(task_ids="run_dataflow", key="dataflow_job_id")
        result = finalize_dataflow(output, job_id)
        verdict = result.manifest["verdict"]  # accounting, documents read, --max-rejected: as `docbeam run`
        if not verdict["ok"]:
            raise RuntimeError(f"docbeam run failed: {'; '.join(verdict['problems'])} (see {output}/errors/)")
        latest.mark(root, output)  # the next daily run reuses this one
        return result.manifest["counts"]

    resolved >> run_dataflow >> wait_for_job >> finalize(resolved["output"], resolved["root"])


with DAG(
    dag_id="docbeam_local",
    description="The same docbeam job on the DirectRunner (samples by default)",
    schedule=None,
    start_date=pendulum.datetime(2026, 12, 1, tz="UTC"),
    catchup=False,
    params=LOCAL_PARAMS,
    tags=["docbeam"],
) as local_dag:

    @task(multiple_outputs=True)
    def resolve_local(params: dict | None = None, ds: str | None = None) -> dict:
        from docbeam.pipeline.launch.after_run import latest

        job = job_options(params, params["input"], f"{params['output_root']}/{ds}")
        if params.get("reuse_previous"):
            job.update(latest.reuse_flags(params["output_root"], job["output"]))
        return {"py_file": run_py_file(), "pipeline_options": job, "output": job["output"]}

    local = resolve_local()
    run_local = BeamRunPythonPipelineOperator(
        task_id="run_local",
        runner="DirectRunner",
        py_file=local["py_file"],
        pipeline_options=local["pipeline_options"],
        py_interpreter=PYTHON,
    )

    @task
    def mark_latest(output: str, params: dict | None = None) -> dict:
        from docbeam.pipeline.launch.after_run import latest

        verdict = latest.mark_if_ok(params["output_root"], output)
        if not verdict["ok"]:
            raise RuntimeError(f"docbeam run failed: {'; '.join(verdict['problems'])} (see {output}/errors/)")
        return verdict

    local >> run_local >> mark_latest(local["output"])
