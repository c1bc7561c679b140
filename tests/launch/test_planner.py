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


def test_the_interrupt_log_filter_ends_on_an_exception_chain_that_loops():
    """A sink client's error whose context chain came back to itself made the filter spin forever
    inside Beam's error log (the suite hung 20+ minutes on a failing store write)."""
    import logging
    import subprocess
    import sys

    from docbeam.pipeline.launch.console import _not_an_interrupt

    code = (
        "import logging; from docbeam.pipeline.launch.console import _not_an_interrupt as f\n"
        "a, b = ValueError('a'), ValueError('b'); a.__context__, b.__context__ = b, a\n"
        "print(f(logging.LogRecord('x', logging.ERROR, 'f', 1, 'm', None, (ValueError, a, None))))"
    )
    # in a child, so that a regression fails at the timeout instead of hanging the suite
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60).stdout == "True\n"
    a = ValueError("a")
    k = KeyboardInterrupt()
    k.__context__ = a
    outer = RuntimeError("wrapped")
    outer.__cause__ = k
    assert not _not_an_interrupt(logging.LogRecord("x", 40, "f", 1, "m", None, (RuntimeError, outer, None)))
