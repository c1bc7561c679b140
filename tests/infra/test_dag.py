"""The Airflow DAGs, loaded and run by Airflow itself.

Needs apache-airflow 3.3 with the apache-beam and google providers in the interpreter that
runs pytest (docbeam's .venv, or a separate one with PYTHONPATH=<repo>); skipped otherwise.
The slow test runs `docbeam_local` end to end with dag.test() against a throwaway SQLite
metadata DB; the Beam job itself runs in $DOCBEAM_PYTHON (default: this interpreter).
"""

from __future__ import annotations

import atexit
import copy
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "infra" / "airflow" / "dags"


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _skip_unless_airflow() -> None:
    needed = ("airflow", "airflow.providers.apache.beam", "airflow.providers.google")
    missing = [m for m in needed if not _importable(m)]
    if missing:
        pytest.skip(
            f"Airflow is not installed here ({', '.join(missing)} missing); "
            "install apache-airflow==3.3.2 apache-airflow-providers-apache-beam==6.3.1 "
            "apache-airflow-providers-google==22.8.0",
            allow_module_level=True,
        )


if not _importable("airflow"):
    _skip_unless_airflow()
# Before anything imports Airflow (finding a provider's spec imports airflow itself): a
# throwaway home (config, SQLite DB, logs), never the developer's own, and the DAG folder
# under test as the one bundle dag.test() syncs.
os.environ["AIRFLOW_HOME"] = tempfile.mkdtemp(prefix="docbeam-airflow-")
atexit.register(shutil.rmtree, os.environ["AIRFLOW_HOME"], ignore_errors=True)
os.environ["AIRFLOW__CORE__DAGS_FOLDER"] = str(DAGS)
os.environ["AIRFLOW__CORE__LOAD_EXAMPLES"] = "False"
_skip_unless_airflow()

from airflow.dag_processing.dagbag import DagBag  # noqa: E402
from airflow.providers.apache.beam.hooks.beam import beam_options_to_args  # noqa: E402
from apache_beam.options.pipeline_options import (  # noqa: E402
    GoogleCloudOptions,
    PipelineOptions,
    WorkerOptions,
)

import docbeam.pipeline.launch.running.options  # noqa: E402,F401  (registers docbeam's own flags with Beam)
from docbeam.pipeline.core.hardware import catalogue  # noqa: E402
from docbeam.pipeline.launch.commands import submit  # noqa: E402

DS = "2026-12-01"
JOB_KEYS = {"input", "output", "attention", "max_seq_len", "overwrite", "extract", "hardware", "reuse"}


def load_dags() -> dict:
    bag = DagBag(dag_folder=str(DAGS))
    assert bag.import_errors == {}
    return bag.dags


@pytest.fixture(scope="module")
def dags() -> dict:
    return load_dags()


def params_for(dag, **override) -> dict:
    """The run's params as Airflow validates them: DAG defaults + a run's overrides. Reusing
    the previous run reads gs://BUCKET/.../_latest: off here, on in the test that serves it."""
    params = copy.deepcopy(dag.params)
    # The TPU compile guard has its own test below (it compiles the default model otherwise).
    off = {"compile_check": False} if "compile_check" in params else {}
    params.update({"reuse_previous": False, **off, **override})
    return params.validate()


def test_dag_folder_loads_without_import_errors(dags):
    assert sorted(dags) == ["docbeam_dataflow", "docbeam_local"]
    # The DAG cannot import the catalogue at parse time: its list is checked against it here.
    schema = dags["docbeam_dataflow"].params.get_param("accelerator").schema
    assert sorted(schema["enum"]) == sorted(catalogue().on_dataflow())
    flow = dags["docbeam_dataflow"]
    assert [t.task_id for t in flow.topological_sort()] == ["resolve", "run_dataflow", "wait_for_job", "finalize"]
    assert [t.task_id for t in dags["docbeam_local"].topological_sort()] == [
        "resolve_local",
        "run_local",
        "mark_latest",
    ]


# (param overrides, the same job as `docbeam submit` flags, written out by hand)
SUBMISSIONS = [
    (
        {},
        [
            "--accelerator",
            "tpu-v5e",
            "--project",
            "my-gcp-project",
            "--region",
            "us-central1",
            "--sdk-container-image",
            "us-central1-docker.pkg.dev/my-gcp-project/docbeam/docbeam-worker-tpu:latest",
            "--max-num-workers",
            "4",
            "--temp-location",
            "gs://my-docbeam-bucket/tmp",
            "--staging-location",
            "gs://my-docbeam-bucket/staging",
        ],
    ),
    (
        {
            "project": "p2",
            "region": "us-east5",
            "bucket": "b2",
            "accelerator": "tpu-v6e",
            "topology": "2x4",
            "image": "img:tpu",
            "max_num_workers": 2,
            "service_account_email": "sa@p2.iam.gserviceaccount.com",
            "subnetwork": "regions/us-east5/subnetworks/s",
            "no_use_public_ips": True,
        },
        [
            "--accelerator",
            "tpu-v6e",
            "--topology",
            "2x4",
            "--project",
            "p2",
            "--region",
            "us-east5",
            "--sdk-container-image",
            "img:tpu",
            "--max-num-workers",
            "2",
            "--service-account-email",
            "sa@p2.iam.gserviceaccount.com",
            "--subnetwork",
            "regions/us-east5/subnetworks/s",
            "--no-use-public-ips",
            "--temp-location",
            "gs://b2/tmp",
            "--staging-location",
            "gs://b2/staging",
        ],
    ),
    (
        {"accelerator": "l4", "accelerator_count": 2, "image": "img:gpu", "max_num_workers": None, "max_seq_len": 128},
        [
            "--accelerator",
            "l4",
            "--accelerator-count",
            "2",
            "--project",
            "my-gcp-project",
            "--region",
            "us-central1",
            "--sdk-container-image",
            "img:gpu",
            "--temp-location",
            "gs://my-docbeam-bucket/tmp",
            "--staging-location",
            "gs://my-docbeam-bucket/staging",
        ],
    ),
]


@pytest.mark.parametrize(("override", "flags"), SUBMISSIONS, ids=["defaults", "tpu-v6e-2x4", "l4x2"])
def test_dataflow_task_options_are_what_docbeam_submit_uses(dags, override, flags):
    dag = dags["docbeam_dataflow"]
    params = params_for(dag, **override)
    resolved = dag.get_task("resolve").python_callable(params=params, ds=DS)

    expected = submit.dataflow_options(submit.parse_submit_args(flags))
    opts = resolved["pipeline_options"]
    assert {k: v for k, v in opts.items() if k not in JOB_KEYS} == expected
    bucket = params["bucket"]
    assert {k: v for k, v in opts.items() if k in JOB_KEYS} == {
        "input": f"gs://{bucket}/docs/{DS}/*",
        "output": f"gs://{bucket}/docbeam/{DS}",
        "attention": "auto",
        **({"max_seq_len": override["max_seq_len"]} if "max_seq_len" in override else {}),
        "overwrite": True,
        "hardware": submit.hardware_spec(submit.parse_submit_args(flags)),  # prices the run
    }
    # the installed docbeam's file: in an editable checkout, a link to the checkout's
    assert Path(resolved["py_file"]).resolve() == REPO / "pipeline" / "run.py"
    json.dumps(resolved)  # it travels as an XCom


def test_the_dataflow_dag_compiles_for_the_tpu_before_submitting(dags, tmp_path):
    """The same guard as `docbeam submit`: a batch that cannot fit on the workers' chips fails
    the resolve task, before run_dataflow submits anything."""
    pytest.importorskip("libtpu")
    from tests.model.tiny import write_tiny_bert

    tiny = write_tiny_bert(tmp_path / "tiny")
    dag = dags["docbeam_dataflow"]
    assert dag.params["compile_check"] is True
    module = sys.modules[dag.get_task("resolve").python_callable.__module__]
    job = {"input": "gs://b/docs/*", "output": "gs://b/out", "model": str(tiny), "batch_rows": 16_000_000}
    with pytest.raises(RuntimeError, match="does not compile or fit on tpu-v5e:4.*nothing was submitted"):
        module.compile_guard(job, "tpu-v5e:4")
    module.compile_guard({**job, "batch_rows": 32}, "tpu-v5e:4")  # fits: returns


def test_the_command_line_airflow_builds_parses_back_in_beam(dags):
    dag = dags["docbeam_dataflow"]
    params = params_for(dag, **SUBMISSIONS[1][0])
    opts = dag.get_task("resolve").python_callable(params=params, ds=DS)["pipeline_options"]
    # The provider's own dict -> flags conversion, then Beam's parser, as in the real task.
    parsed = PipelineOptions(beam_options_to_args(opts))
    everything = parsed.get_all_options()
    assert {k: everything[k] for k in opts if k not in JOB_KEYS} == {k: v for k, v in opts.items() if k not in JOB_KEYS}
    assert everything["input"] == [f"gs://b2/docs/{DS}/*"] and everything["overwrite"] is True
    assert parsed.view_as(WorkerOptions).use_public_ips is False
    assert parsed.view_as(GoogleCloudOptions).dataflow_service_options == [
        "worker_accelerator=type:tpu-v6e-slice;topology:2x4"
    ]
    # What the operator adds before it starts pipeline/run.py (its own dataflow_config keys),
    # through docbeam's strict command-line check: nothing it passes is refused.
    from docbeam.pipeline.core.command_line import check_job_args

    added = {
        "runner": "DataflowRunner",
        "job_name": "docbeam-20261201-5f2a",
        "project": "p2",
        "region": "us-east5",
        "labels": {"airflow-version": "v3-3-2"},
        "impersonate_service_account": "sa@p2.iam.gserviceaccount.com",
    }
    check_job_args(beam_options_to_args({**opts, **added}), "python -m docbeam.pipeline.run")


def test_tasks_are_wired_to_the_resolved_options_and_the_pushed_job_id(dags):
    dag = dags["docbeam_dataflow"]
    run = dag.get_task("run_dataflow")
    assert run.runner == "DataflowRunner"
    assert (run.pipeline_options.operator.task_id, run.pipeline_options.key) == ("resolve", "pipeline_options")
    assert (run.py_file.operator.task_id, run.py_file.key) == ("resolve", "py_file")

    params = params_for(dag, project="p2", region="europe-west4")
    context = {"params": params, "ds": DS, "ds_nodash": DS.replace("-", "")}
    config = run.render_template(run.dataflow_config, context)
    assert config == {
        "job_name": "docbeam-20261201",
        "project_id": "p2",
        "location": "europe-west4",
        "wait_until_finished": False,
    }

    wait = dag.get_task("wait_for_job")
    assert wait.expected_statuses == {"JOB_STATE_DONE"}
    assert wait.mode == "reschedule"
    assert "xcom_pull(task_ids='run_dataflow', key='dataflow_job_id')" in wait.job_id
    assert (wait.render_template(wait.project_id, context), wait.render_template(wait.location, context)) == (
        "p2",
        "europe-west4",
    )
    assert {"project_id", "location", "job_id"} <= set(wait.template_fields)


@pytest.fixture
def airflow_db() -> None:
    """Migrate the throwaway SQLite metadata DB (about 5 s)."""
    subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], check=True, capture_output=True, timeout=300)


@pytest.mark.slow
def test_local_dag_runs_the_sample_job_end_to_end(airflow_db, tmp_path, monkeypatch):
    # Read when the DAG file is parsed: the interpreter for pipeline/run.py.
    monkeypatch.setenv("DOCBEAM_PYTHON", os.environ.get("DOCBEAM_PYTHON", sys.executable))
    # pipeline/run.py runs as a script: make docbeam importable even where it is not installed.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    import pendulum

    dag = load_dags()["docbeam_local"]
    manifests = []
    for day in (1, 2):  # the second day's run reuses the first's: the input did not change
        conf = {"output_root": str(tmp_path), "input": str(REPO / "samples" / "docs" / "notes.txt")}  # small: fast
        run = dag.test(logical_date=pendulum.datetime(2026, 12, day, tz="UTC"), run_conf=conf)
        states = {ti.task_id: str(ti.state) for ti in run.get_task_instances()}
        assert states == {"resolve_local": "success", "run_local": "success", "mark_latest": "success"}, states
        out = tmp_path / f"2026-12-0{day}"
        assert sorted(p.name for p in (out / "documents").glob("*.parquet"))
        assert (tmp_path / "_latest").read_text().strip() == str(out)
        manifests.append(json.loads((out / "_manifest.json").read_text()))
    first, second = manifests
    assert first["counts"]["ok"] > 0 and "reuse" not in first
    assert second["reuse"]["from"] == str(tmp_path / DS)
    assert second["reuse"]["documents_reused"] == first["counts"]["ok"] and second["reuse"]["documents_encoded"] == 0


def test_the_finalize_task_fails_when_the_run_failed(dags, monkeypatch, tmp_path):
    """The DAG's last task applies the run's verdict (accounting, --max-rejected): a scheduled
    run that rejected everything fails its task instead of ending green."""
    import types

    import docbeam.pipeline.launch.commands.dataflow_finish as fin

    verdicts = iter([{"ok": True, "problems": []}, {"ok": False, "problems": ["every document (3) was rejected"]}])

    def finished(output, job_id):  # stands in for the Dataflow API, which cannot run here
        return types.SimpleNamespace(manifest={"verdict": next(verdicts), "counts": {"ok": 3}})

    monkeypatch.setattr(fin, "finalize_dataflow", finished)
    task = dags["docbeam_dataflow"].get_task("finalize")
    ti = types.SimpleNamespace(xcom_pull=lambda **kw: "job-1")
    root = tmp_path / "series"
    assert task.python_callable("gs://b/out/2026-12-01", str(root), ti=ti) == {"ok": 3}
    assert (root / "_latest").read_text().strip() == "gs://b/out/2026-12-01"  # the next run reuses it
    with pytest.raises(RuntimeError, match="every document \\(3\\) was rejected"):
        task.python_callable("gs://b/out/2026-12-02", str(root), ti=ti)
    assert (root / "_latest").read_text().strip() == "gs://b/out/2026-12-01"  # a failed run is never reused


def test_the_daily_run_reuses_the_last_good_output(dags, gcs_emulator):
    dag = dags["docbeam_dataflow"]
    bucket = gcs_emulator.create_bucket()
    params = params_for(dag, bucket=bucket, reuse_previous=True)
    first = dag.get_task("resolve").python_callable(params=params, ds="2026-12-01")
    assert "reuse" not in first["pipeline_options"]  # the first run of a series: nothing to reuse
    from docbeam.pipeline.launch.after_run import latest

    latest.mark(first["root"], first["output"])
    second = dag.get_task("resolve").python_callable(params=params, ds="2026-12-02")
    assert second["pipeline_options"]["reuse"] == f"gs://{bucket}/docbeam/2026-12-01"
