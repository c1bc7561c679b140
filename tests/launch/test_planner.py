"""What the launcher decides before a job starts, and says why."""

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.launch.planning.planner import list_files, make_plan, resolve_dtype, resolve_inputs
from tests.helpers import SAMPLES


@pytest.mark.parametrize(
    ("extra", "dtype", "why"),
    [
        ([], "float32", "float32: CPU without"),  # tests/conftest.py pins DOCBEAM_CPU_FLAGS to AVX2
        (["--runner", "DataflowRunner", "--hardware", "cpu"], "float32", "float32: CPU workers"),
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
    assert resolve_dtype("float32", "tpu")[0] == "float32"


@pytest.mark.parametrize(
    ("flags", "dtype", "named"),
    [
        ({"avx2", "fma", "avx512f", "avx512_bf16"}, "bfloat16", "AVX-512 BF16 (avx512_bf16)"),
        ({"avx2", "amx_tile", "amx_bf16", "avx512_bf16"}, "bfloat16", "AMX (amx_bf16)"),
        ({"avx", "avx2", "fma"}, "float32", "has AVX2, FMA, AVX"),
        ({"avx2", "avx512f", "avx512bw"}, "float32", "has AVX512F, AVX2"),  # AVX-512 without BF16: float32
        (set(), "float32", "no CPU flags readable"),
    ],
)
def test_auto_on_a_cpu_goes_by_its_bf16_instructions_and_names_them(flags, dtype, named):
    got, reason = resolve_dtype("auto", "cpu", frozenset(flags))
    assert got == dtype and named in reason and reason.startswith(dtype)


def test_this_cpus_flags_are_read_from_proc_cpuinfo_unless_pinned(monkeypatch, tmp_path):
    from docbeam.pipeline.core import cpu_features

    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Some CPU\nflags\t\t: fpu avx2 fma avx512_bf16\n\nflags : x\n")
    monkeypatch.setattr(cpu_features, "CPUINFO", info)
    cpu_features.cpuinfo_flags.cache_clear()
    monkeypatch.delenv("DOCBEAM_CPU_FLAGS")
    try:
        assert cpu_features.this_cpu() == {"fpu", "avx2", "fma", "avx512_bf16"}
        assert cpu_features.cpu_name() == "Some CPU"
        plan = make_plan(PipelineOptions(["--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path / "o")]))
        assert plan.encoder.dtype == "bfloat16" and "AVX-512 BF16 (avx512_bf16)" in plan.dtype_reason
        assert "DOCBEAM_CPU_FLAGS" not in plan.dtype_reason  # read from the CPU itself
        info.write_text("processor\t: 0\nFeatures\t: fp asimd sve bf16\n")  # Arm: no x86 bf16 unit
        cpu_features.cpuinfo_flags.cache_clear()
        assert resolve_dtype("auto", "cpu", cpu_features.this_cpu())[1].endswith("widened to float32 for every product")
        assert "none of AVX512F, AVX2, FMA, AVX" in resolve_dtype("auto", "cpu", cpu_features.this_cpu())[1]
        monkeypatch.setenv("DOCBEAM_CPU_FLAGS", "avx2")  # pinned: the file is not read
        assert cpu_features.this_cpu() == {"avx2"}
        plan = make_plan(PipelineOptions(["--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path / "p")]))
        assert plan.dtype_reason.endswith("(flags from $DOCBEAM_CPU_FLAGS, not this CPU's)")
    finally:
        cpu_features.cpuinfo_flags.cache_clear()


def test_the_interrupt_log_filter_ends_on_an_exception_chain_that_loops():
    """A sink client's error whose context chain came back to itself made the filter spin forever
    inside Beam's error log (the suite hung 20+ minutes on a failing store write)."""
    import logging
    import subprocess
    import sys

    from docbeam.pipeline.launch.display.console import _not_an_interrupt

    code = (
        "import logging; from docbeam.pipeline.launch.display.console import _not_an_interrupt as f\n"
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


def test_a_folders_files_without_an_extension_are_named_when_left_out(tmp_path, caplog):
    """A folder of licences or man pages: what it leaves out is said, and naming the file reads it."""
    (tmp_path / "notes.txt").write_text("Some text.")
    (tmp_path / "LICENSE").write_text("Permission is hereby granted.")
    with caplog.at_level("WARNING", logger="docbeam"):
        listing = list_files(resolve_inputs([str(tmp_path)]), say_left_out=True)
    assert [p.rsplit("/", 1)[1] for p in listing] == ["notes.txt"]
    assert "1 file(s) without an extension docbeam reads left out (LICENSE)" in caplog.text
    assert list(list_files(resolve_inputs([str(tmp_path / "LICENSE")]))) == [str(tmp_path / "LICENSE")]
