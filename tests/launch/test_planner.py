"""What the launcher decides before a job starts, and says why."""

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.launch.planner import make_plan, resolve_dtype
from tests.helpers import SAMPLES


@pytest.mark.parametrize(
    ("extra", "dtype", "why"),
    [
        ([], "float32", "float32: CPU"),
        (["--runner", "DataflowRunner", "--hardware", "tpu-v5e:4"], "bfloat16", "bfloat16: TPU"),
        (["--runner", "DataflowRunner", "--hardware", "l4"], "bfloat16", "bfloat16: GPU"),
        (["--dtype", "bfloat16"], "bfloat16", "bfloat16: requested"),
    ],
)
def test_dtype_auto_is_per_platform_and_says_why(tmp_path, extra, dtype, why):
    plan = make_plan(PipelineOptions(["--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path), *extra]))
    assert plan.encoder.dtype == dtype and plan.dtype_reason.startswith(why)
    assert plan.settings["dtype"] == dtype  # the fingerprint holds what ran, not "auto"


def test_resolve_dtype():
    assert resolve_dtype("auto", "cpu")[0] == "float32" and resolve_dtype("float32", "tpu")[0] == "float32"
