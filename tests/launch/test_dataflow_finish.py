"""docbeam.pipeline.finalize: finishing a run whose launcher was ended once Dataflow had the job.

The Dataflow service cannot run here, so the API client is the one stand-in: it answers
with the job's counters in the shape the Dataflow API returns them, and Beam's own
DataflowMetrics parses them.
"""

import json
from types import SimpleNamespace

import pytest

from docbeam.pipeline.launch.commands import dataflow_finish
from tests.helpers import SAMPLES, run_job

pytestmark = pytest.mark.slow


class RecordedDataflow:
    """Dataflow API answers for one finished job, built from a real run's counters."""

    def __init__(self, totals: dict):
        self.totals = totals

    def get_job_metrics(self, job_id):
        metrics = []
        for stage, values in self.totals.items():
            for name, value in values.items():
                if name.endswith("_bytes") and name not in ("bytes_in", "bytes_out"):
                    continue  # gauges: the Dataflow API reports none
                for tentative in ("true", "false"):
                    context = {"namespace": f"docbeam.{stage}", "step": "s7", "tentative": tentative}
                    metrics.append(
                        SimpleNamespace(
                            name=SimpleNamespace(origin="user", name=name, context=context),
                            scalar=value,
                            distribution=None,
                        )
                    )
        return SimpleNamespace(metrics=metrics)

    def get_job(self, job_id):
        return SimpleNamespace(createTime="2026-12-02T10:00:00Z", currentStateTime="2026-12-02T10:05:30.5Z")


def test_finalize_writes_what_the_launcher_could_not(tmp_path):
    out = tmp_path / "out"
    res = run_job(SAMPLES / "*", out, "--hardware", "tpu-v5e")
    for f in ("_manifest.json", "_cost/report.json", "_cost/report.md"):
        (out / f).unlink()
    for f in (out / "_progress").glob("*.json"):
        f.unlink()  # the launcher was ended before it could commit the wave

    done = dataflow_finish.finalize_dataflow(
        str(out), "2026-12-02_02_00_00-123", client=RecordedDataflow(res.stage_totals)
    )
    m = json.loads((out / "_manifest.json").read_text())
    assert m["accounting"]["holds"] and m["counts"] == res.manifest["counts"]
    assert m["attention"]["used_by_workers"] == ["xla_fused"] and m["attention"]["platform"] == "remote"
    report = json.loads((out / "_cost" / "report.json").read_text())
    assert report["wall_seconds"] == pytest.approx(330.5)
    assert report["billing_basis"].startswith("metered stage seconds")
    assert report["hardware"]["name"] == "tpu-v5e"
    assert done.stage_totals["encode"]["tokens"] == res.stage_totals["encode"]["tokens"]
    (progress,) = (out / "_progress").glob("*.json")  # the wave is committed now, with its real files
    assert json.loads(progress.read_text())["files"] == sorted(str(p) for p in SAMPLES.glob("*") if p.is_file())


def test_finalize_fails_a_run_that_rejected_everything(tmp_path):
    """A scheduled run whose documents were all rejected must fail its finalize step."""
    from docbeam.pipeline.launch.display.console import exit_status
    from tests.helpers import write_jsonl

    src = write_jsonl(tmp_path / "in.jsonl", [{"id": i, "body": "no text field here"} for i in range(3)])
    out = tmp_path / "out"
    res = run_job(src, out, "--hardware", "tpu-v5e")
    done = dataflow_finish.finalize_dataflow(str(out), "job-1", client=RecordedDataflow(res.stage_totals))
    assert done.manifest["verdict"]["problems"] == ["every document (3) was rejected"]
    assert exit_status(done)[0] == 3
