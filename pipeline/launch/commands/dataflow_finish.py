"""Finish a Dataflow run whose launcher did not wait for its job.

    python -m docbeam.pipeline.finalize --output gs://BUCKET/out --job-id JOB_ID

Airflow's Beam operator returns (and may end the launching `pipeline/run.py`) as soon as
Dataflow has the job, so the steps `run.py` takes after the job (commit the wave, read the
outputs back, check the accounting, write `_manifest.json` and `_cost/`) would never happen.
The launcher records what it submitted in `_job.json` before the job starts; this command
reads it back, fetches the job's docbeam counters from the Dataflow API (Beam's own
DataflowMetrics) and runs the very same finalisation. Dataflow reports no gauges, so peak
memory figures are absent from such a report.
"""

import argparse
import datetime as dt
import json
import sys

from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.exit_status import ExitStatus
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.io import storage
from docbeam.pipeline.launch.display.console import configure_logging, exit_status, summary
from docbeam.pipeline.launch.planning.planner import list_files, make_plan, remote_attention
from docbeam.pipeline.launch.running import waves
from docbeam.pipeline.launch.running.execute import stage_totals
from docbeam.pipeline.launch.running.job import Launch, RunResult, WavesDone, finalize, make_rates
from docbeam.pipeline.launch.running.options import DocbeamOptions


class _FinishedJob:
    """The little of a PipelineResult that Beam's DataflowMetrics asks for."""

    def __init__(self, job_id: str, metrics_source):
        self._job_id, self._metrics = job_id, metrics_source

    def job_id(self) -> str:
        return self._job_id

    def is_in_terminal_state(self) -> bool:
        return True

    def metrics(self):
        return self._metrics


def dataflow_metrics(options: PipelineOptions, job_id: str, client=None):
    """Beam's DataflowMetrics for a finished job (client: a DataflowApplicationClient)."""
    from apache_beam.runners.dataflow.dataflow_metrics import DataflowMetrics

    if client is None:
        from apache_beam.runners.dataflow.internal.apiclient import DataflowApplicationClient

        client = DataflowApplicationClient(options)
    metrics = DataflowMetrics(client)
    metrics.job_result = _FinishedJob(job_id, metrics)
    return metrics


def job_seconds(client, job_id: str) -> float:
    job = client.get_job(job_id)
    start, end = (
        dt.datetime.fromisoformat(str(t).replace("Z", "+00:00")) for t in (job.createTime, job.currentStateTime)
    )
    return (end - start).total_seconds()


def finalize_dataflow(output: str, job_id: str, client=None) -> RunResult:
    record = json.loads(storage.read_text(tables.join(output, tables.JOB_RECORD)))
    options = PipelineOptions(record["argv"])
    d = options.view_as(DocbeamOptions)
    plan = make_plan(options)
    launch = Launch(plan, options, record["argv"], False, make_rates(d, local=False), remote_attention(d.attention))
    metrics = dataflow_metrics(options, job_id, client)
    client = client or metrics._dataflow_client
    done = WavesDone(tuple(waves.committed(plan.output)))
    wave = waves.Wave(record["wave"], record["inputs"])
    if wave.key not in {r["key"] for r in done.records}:
        files = record.get("files") or sorted(list_files(plan.inputs))
        totals, wall = stage_totals(metrics.job_result), job_seconds(client, job_id)
        done = done.plus(waves.commit(plan.output, wave, files, totals, wall, plan.settings))
    return finalize(launch, done)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m docbeam.pipeline.finalize",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--output", required=True, help="the run's --output (gs:// prefix)")
    ap.add_argument("--job-id", required=True, help="the Dataflow job id")
    args = ap.parse_args(argv)
    configure_logging()
    try:
        res = finalize_dataflow(args.output, args.job_id)
    except UsageError as exc:
        print(f"docbeam finalize: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    print(summary(res))
    status, why = exit_status(res)  # the same verdict as `docbeam run`: accounting, --max-rejected
    for line in why:
        print(line, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
