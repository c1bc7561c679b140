"""Compiling for TPUs on this CPU machine (libtpu, the `tpu` extra): every TPU-capable kernel
lowers to Mosaic for v5e and v6e, declared costs agree with the reference's, and `docbeam
compile` / the submit guard compile a whole (small) encoder for a worker's chips."""

import contextlib
import io
import re

import jax
import numpy as np
import pytest

from docbeam.kernels import api as kernels
from docbeam.kernels import compat
from docbeam.kernels.spec import attention_cost
from docbeam.pipeline import cli
from docbeam.pipeline.core.hardware import catalogue
from docbeam.pipeline.encode import aot
from tests.helpers import REPO
from tests.model.tiny import FFN, HIDDEN, write_tiny_bert

pytest.importorskip("libtpu", reason="the tpu extra (libtpu) compiles for TPUs; make test installs it")

SHAPE = (4, 256, 2, 128)  # one row per chip of a 2x2 host
PALLAS = {"flash", "tpu_flash", "splash"}


@pytest.fixture(scope="module", params=["tpu-v5e", "tpu-v6e"])
def chips(request) -> aot.Target:
    return aot.target(request.param, 4)


def compiled(name: str, t: aot.Target, window: int | None):
    return aot.compile_kernel(name, t, SHAPE, "bfloat16", window)


def tpu_kernels() -> list[tuple[str, int | None]]:
    out = []
    for name in kernels.names():
        for window in (None, 16):
            if kernels.availability(name, "tpu", SHAPE, "bfloat16", window=window).usable:
                out.append((name, window))
    return out


@pytest.mark.parametrize(("name", "window"), tpu_kernels())
def test_every_tpu_kernel_compiles_for_the_chip(name, window, chips):
    exe = compiled(name, chips, window)
    # Mosaic, not the CPU's interpret mode: the kernel is one TPU custom call.
    assert ("tpu_custom_call" in exe.as_text()) == (name in PALLAS), name
    assert exe.memory_analysis().argument_size_in_bytes > 0


# The packer's shapes on a 4-chip host: 8 rows of 256 per chip (docbeam's flash once failed
# Mosaic's (8, 128) block rule there), and 64-token rows for short segments, with a window too.
PACKER_SHAPES = [((32, 256, 12, 64), None), ((32, 256, 12, 64), 64), ((128, 64, 12, 32), 16)]


@pytest.mark.parametrize(("shape", "window"), PACKER_SHAPES)
def test_kernels_compile_at_the_packers_shapes(shape, window):
    t = aot.target("tpu-v5e", 4)
    for name in ("flash", "blockwise", "native") if window else ("flash", "splash", "tpu_flash", "native"):
        assert aot.kernel_compiles(name, t, shape, "bfloat16", window) == "", name


def test_kernels_command_says_which_compile_for_a_tpu():
    code, out, err = run_cli("kernels", "--hardware", "tpu-v6e:4", "--dtype", "bfloat16", "--window", "64")
    assert code == 0, out + err
    lines = dict(re.findall(r"^  (\w+)\s+(compiles|no)\b", out, re.M))
    assert lines["flash"] == lines["blockwise"] == "compiles"
    assert lines["splash"] == "no" and lines["gpu_mha"] == "no"
    assert "auto -> blockwise" in out or "auto -> native" in out


def test_the_tpu_kernel_set_is_what_the_issue_names():
    names = {n for n, _ in tpu_kernels()}
    assert {"splash", "tpu_flash", "flash", "native", "xla_fused", "blockwise"} <= names
    assert {n for n, w in tpu_kernels() if w is not None} >= {"flash", "blockwise", "native", "xla_fused"}


@pytest.mark.parametrize("name", sorted(PALLAS))
def test_pallas_costs_agree_with_the_reference(name, chips):
    """A Pallas call is opaque to XLA: its flops come from what it declares (or, for a kernel
    that declares nothing, from kernels.uncounted_cost). Same order as the reference's."""
    ref = compat.cost_analysis(compiled("reference", chips, None))
    cost = compat.cost_analysis(compiled(name, chips, None))
    per_chip = (SHAPE[0] // 4, *SHAPE[1:])
    extra_flops, _, extra_bytes = kernels.uncounted_cost(name, per_chip, 2)
    flops, moved = cost["flops"] + extra_flops, cost["bytes accessed"] + extra_bytes
    assert 0.5 <= flops / ref["flops"] <= 2, f"{name}: {flops:.3g} flops against the reference's {ref['flops']:.3g}"
    qkvo = 4 * np.prod(per_chip) * 2
    assert moved >= qkvo, f"{name}: {moved} bytes accessed, less than q, k, v and out ({qkvo})"


def test_splash_reads_q_k_v_sequence_minor():
    """The default model's heads (32 wide) laid out head-dim-minor cost each of q, k and v two
    re-layouts before splash: 269 MB per chip here for the full batch (jax 0.10.2, libtpu
    0.0.42); sequence-minor, one: 143 MB. The README's compiled bound depends on it."""
    exe = aot.compile_kernel("splash", aot.target("tpu-v5e", 4), (128, 256, 12, 32), "bfloat16", None)
    assert exe.cost_analysis()["bytes accessed"] < 0.6 * 268_959_744


def test_a_declared_window_cost_counts_only_the_keys_in_reach():
    full, _, _ = attention_cost((1, 1024, 2, 64), 2)
    local, _, _ = attention_cost((1, 1024, 2, 64), 2, window=64)
    assert local * 1024 == full * 129


def test_the_worker_image_pins_what_the_catalogue_says():
    pins = (REPO / "infra" / "dataflow" / "requirements-tpu.txt").read_text()
    assert f"jax[tpu]=={catalogue().worker_image['jax']}" in pins
    assert f"libtpu ({catalogue().worker_image['libtpu']}." in pins  # the comment naming what jax[tpu] brings


def test_every_tpu_in_the_catalogue_has_a_compile_target():
    for name, acc in catalogue().accelerators.items():
        if acc.kind != "tpu":
            continue
        assert acc.compile_name and acc.hbm_gb > 0 and acc.hbm_gbps > 0, name
        for chips, worker in acc.workers.items():
            t = aot.target(name, chips)
            assert np.prod(worker.host_bounds) == chips
            assert len(aot.devices_for(t)) == chips, t.topology


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return write_tiny_bert(tmp_path_factory.mktemp("tiny"))


def test_compile_prints_every_batch_shape_of_a_worker(tiny):
    code, out, err = run_cli("compile", "--hardware", "tpu-v5e:4", "--model", str(tiny), "--bytes", "3")
    assert code == 0, err + out
    assert "compiled bounds, not measurements" in out and "topology v5e:2x2" in out
    rows = re.findall(r"^\s+\[(\d+), (\d+)\] (\S+)\s+([\d.]+)s .* (memory|compute)\s*$", out, re.M)
    # The tiny model's window is 64 tokens: one row length; a TPU batch is 32 rows per chip
    # (128), and the packer's smaller counts 32, 8 and 1, rounded up to whole rows on 4 chips.
    assert sorted(int(r) for r, *_ in rows) == [4, 8, 32, 128], out
    assert "tokens/s per chip" in out
    # The worker's host rate beside the chips' bound, and which binds (a tiny model's chips
    # outrun any host: the host binds, priced at its rate).
    host = re.search(
        r"^worker ct5lp-hightpu-4t \(112 vCPUs, 4 chip\(s\)\): chips at most ([\d,]+) .* host ([\d,]+)", out, re.M
    )
    assert host, out
    chips, rate = (int(x.replace(",", "")) for x in host.groups())
    assert rate < chips and re.search(
        rf"^binds: the host, {host.group(2)} tokens/s \(\d+% .*\$[\d.e-]+ per 1M", out, re.M
    )
    # --bytes 3: the largest batch's three costliest ops, per token, after the table.
    where = out.split("where the bytes go in [128, 64]", 1)[1].splitlines()[1:4]
    assert all(re.match(r"^\s+[\d.]+ KB/tok\s+[\d.]+% ", line) for line in where), out


@pytest.fixture(scope="module")
def tiny_full_batch(tiny) -> tuple[tuple[int, int, int], str]:
    """The tiny model's full batch compiled for v5e:4: its key and compiled HLO text."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.encode.runtime import EncoderRuntime
    from docbeam.pipeline.launch.commands.compile_check import worker_settings

    t = aot.target("tpu-v5e", 4)
    (_, settings), *_ = worker_settings(PipelineOptions([f"--model={tiny}"]), 4)[0]
    key = aot.largest_batch(settings, t)
    return key, EncoderRuntime(settings, compile_for=aot.devices_for(t)).compile_shape(key).as_text()


def test_each_chip_pools_and_keeps_only_its_own_rows(tiny_full_batch):
    """Pooling over one flat slot numbering made XLA sum the whole batch's vectors across the
    chips (an all-reduce) and give every chip all of them; per row, each keeps its own."""
    from docbeam.pipeline.encode import hlo_traffic

    (rows, _, slots), hlo = tiny_full_batch
    assert not any(kind == "all-reduce" for _, kind, _, _ in hlo_traffic.instructions(hlo))
    root = next(line for line in hlo.split("\nENTRY ", 1)[1].splitlines() if "ROOT" in line)
    assert f"= f32[{rows // 4},{slots},{HIDDEN}]" in root, root  # this chip's rows only


def test_the_ffn_activation_crosses_hbm_in_bfloat16(tiny_full_batch):
    """XLA (TPU) wrote exact GELU's float32 input [rows, T, intermediate] and computed erf in
    the next matmul's fusion; computed beside its matmul, only the bfloat16 result is written."""
    (rows, seq, _), hlo = tiny_full_batch
    entry = hlo.split("\nENTRY ", 1)[1]
    widest = f"[{rows // 4},{seq},{FFN}]"
    assert f"bf16{widest}" in entry and f"f32{widest}" not in entry


def test_a_batch_that_does_not_fit_fails_before_anything_is_billed(tiny):
    code, out, err = run_cli("compile", "--hardware", "tpu-v5e:4", "--model", str(tiny), "--batch-rows", "16000000")
    assert code == 2
    assert re.search(r"\[16000000, 64\] native\s+FAILED to compile: .*HBM", out), out


def test_submit_runs_the_same_guard(tiny):
    code, out, err = run_cli(
        "submit",
        "--accelerator",
        "tpu-v5e",
        "--topology",
        "2x2",
        "--input",
        str(REPO / "samples" / "docs" / "*"),
        "--output",
        "gs://bucket/out",
        "--model",
        str(tiny),
        "--batch-rows",
        "16000000",
        "--project",
        "p",
        "--region",
        "us-central1",
        "--temp-location",
        "gs://bucket/tmp",
        "--sdk-container-image",
        "image",
    )
    assert code == 2 and "nothing was submitted" in err, err
    assert "FAILED to compile" in out


def test_a_kernel_the_tpu_cannot_run_is_one_line(tiny):
    code, _, err = run_cli("compile", "--hardware", "tpu-v5e:4", "--model", str(tiny), "--attention", "gpu_mha")
    assert code == 2 and "--attention: attention 'gpu_mha' cannot run on tpu" in err and "Traceback" not in err


def test_compile_refuses_what_is_not_a_tpu():
    code, _, err = run_cli("compile", "--hardware", "l4")
    assert code == 2 and "--hardware l4 is not a TPU" in err
    code, _, err = run_cli("compile")
    assert code == 2 and "--hardware tpu-TYPE[:CHIPS] is required" in err


def test_compiling_for_a_tpu_never_reads_the_persistent_cache(tiny):
    """A compile-only client cannot load cache entries: with the cache on in this process (a
    local runtime switched it on), compiling the same TPU shape twice warns of nothing."""
    import warnings

    from docbeam.pipeline.encode.packing import PackSpec
    from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings

    settings = EncoderSettings(str(tiny), None, "auto", "bfloat16", PackSpec(rows=8, seq_len=64))
    assert EncoderRuntime(settings).compile_cache  # the suite's cache (conftest): on
    t = aot.target("tpu-v5e", 4)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for _ in range(2):
            assert aot.compile_worker(settings, t, keys=[(8, 64, 32)])[0].fits
    assert not [str(w.message) for w in seen if "compilation cache" in str(w.message)]
    assert jax.config.jax_enable_compilation_cache  # left as it was
