"""`docbeam compile`: every executable a TPU worker of this run would build, compiled here
first, so a kernel that does not lower or a batch that does not fit fails before any worker
is billed. `docbeam submit --accelerator tpu-*` runs it as a guard (encode.aot does the work)."""

import dataclasses
import sys
from typing import TextIO

from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.hardware import HardwareError, catalogue, parse_spec
from docbeam.pipeline.cost.pricing import PriceTable, PricingError
from docbeam.pipeline.encode import aot
from docbeam.pipeline.encode.runtime import EncoderSettings
from docbeam.pipeline.launch.planning.planner import make_plan, pack_spec, resolve_dtype
from docbeam.pipeline.launch.running.options import DocbeamOptions

HEADER = (
    f"{'batch':>12} {'kernel(s)':<26} {'compile':>8} {'args':>8} {'temp':>8} {'out':>7} {'code':>7} "
    f"{'HBM used':>9} {'MFLOP/tok':>9} {'KB/tok':>7} {'bound tok/s/chip':>16} {'limit':<7}"
)


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f}MB"


def row(r: aot.ShapeResult) -> str:
    shape = f"[{r.rows}, {r.seq_len}]"
    if r.error:
        return f"{shape:>12} {r.kernels:<26} FAILED to compile: {r.error}"
    used = f"{r.used_bytes / r.hbm_bytes:.1%}"
    line = (
        f"{shape:>12} {r.kernels:<26} {r.seconds:>7.1f}s {_mb(r.argument_bytes):>8} {_mb(r.temp_bytes):>8} "
        f"{_mb(r.output_bytes):>7} {_mb(r.code_bytes):>7} {used:>9} {r.flops_per_token / 1e6:>9.2f} "
        f"{r.bytes_per_token / 1e3:>7.1f} {r.bound_tokens_per_s:>16,.0f} {r.limit:<7}"
    )
    return line if r.fits else f"{line}  DOES NOT FIT in {r.hbm_bytes / 2**30:.0f} GiB"


def worker_settings(options: PipelineOptions, chips: int) -> tuple[list[tuple[str, EncoderSettings]], str]:
    """The encoders a TPU worker of `chips` builds for this run (the model's, and --ner-model's):
    the dtype `--dtype` resolves to there (and why), its batch rows."""
    d = options.view_as(DocbeamOptions)
    plan = make_plan(options, needs_output=False, needs_input=False)
    dtype, reason = resolve_dtype(d.dtype, "tpu")

    def on_tpu(s: EncoderSettings, batch_rows: int | None, **kw) -> EncoderSettings:
        pack = pack_spec(batch_rows, s.pack.seq_len, "tpu", chips)
        return dataclasses.replace(s, dtype=dtype, pack=pack, **kw)

    encoders = [("model", on_tpu(plan.encoder, d.batch_rows, profile_dir=None))]
    if plan.ner:  # --batch-rows sizes the embedding model's batches only, as in a run
        encoders.append(("ner model", on_tpu(plan.ner.encoder, None)))
    return encoders, reason


def traffic_lines(r: aot.ShapeResult) -> list[str]:
    """`r.traffic` as lines: per op, KB per token of one chip and its share of all the bytes."""
    *ops, every = r.traffic
    tokens = r.rows // r.chips * r.seq_len
    head = (
        f"where the bytes go in [{r.rows}, {r.seq_len}] (per op, from the compiled HLO: operands + result of "
        f"each instruction, {every.bytes / tokens / 1e3:.1f} KB/token in all; an estimate beside XLA's total):"
    )
    return [head] + [
        f"  {x.bytes / tokens / 1e3:>7.1f} KB/tok {x.bytes / every.bytes:>6.1%} {x.count:>4}x {x.kind:<20} {x.what}"
        for x in ops
    ]


def check(
    options: PipelineOptions, hardware: str, out: TextIO | None = None, pricing: str | None = None, top: int = 0
) -> bool:
    """Compile and print (to standard output by default); True when every shape compiled and fits.
    `top`: after each encoder's table, the `top` ops moving the most bytes in its largest batch."""
    out = out or sys.stdout
    name, chips = parse_spec(hardware)
    try:
        t = aot.target(name, chips)
    except HardwareError as exc:
        raise UsageError(f"--hardware {hardware}: {exc}") from None
    encoders, dtype_reason = worker_settings(options, t.worker.chips)
    devices = "x".join(map(str, t.worker.host_bounds))
    print(f"compiling for {hardware}: {t.worker.chips} chip(s), topology {t.topology} (hosts {devices}),", file=out)
    print(f"  {t.accelerator.hbm_gb:g} GiB HBM and {t.accelerator.hbm_gbps:g} GB/s per chip; {dtype_reason}", file=out)
    mismatch = aot.version_mismatch()
    if mismatch:
        print(f"  NOTE: this compiler differs from the workers' ({mismatch}): the result may not hold there", file=out)
    print("  compiled bounds, not measurements: no TPU runs anything here", file=out)
    usd_hour = _chip_hour_usd(t, pricing)
    ok = True
    for label, settings in encoders:
        print(f"\n{label} ({settings.model or 'default'}, {settings.dtype}):\n{HEADER}", file=out)
        results = aot.compile_worker(settings, t, on_result=lambda r: print(row(r), file=out, flush=True), top=top)
        ok = ok and all(r.fits for r in results)
        good = [r for r in results if r.fits]
        if good:
            full = max(good, key=lambda r: r.rows * r.seq_len)
            usd = f", ${usd_hour / (full.bound_tokens_per_s * 3600) * 1e6:.2g} per 1M tokens" if usd_hour else ""
            print(
                f"largest batch [{full.rows}, {full.seq_len}]: at most {full.bound_tokens_per_s:,.0f} tokens/s "
                f"per chip ({full.limit}-bound){usd}",
                file=out,
            )
            if label == "model":
                print("\n".join(binding_lines(full.bound_tokens_per_s * t.worker.chips, t, usd_hour)), file=out)
            if top:
                print("\n".join(traffic_lines(full)), file=out)
    return ok


def binding_lines(chips_bound: float, t: aot.Target, usd_chip_hour: float) -> list[str]:
    """The worker's chips (their compiled bound, all chips) beside its host work (hardware.yaml's
    host rates for its vCPUs): which binds, and a million tokens priced at that rate. Encoder
    tokens are taken for document tokens here (chunks only: overlaps and --extract add more;
    `docbeam estimate` measures the ratio on a sample)."""
    host = catalogue().host
    host_rate, what, binds = host.binding(t.worker.vcpus, chips_bound)
    rate = min(host_rate, chips_bound)
    usd = (
        f"; ${usd_chip_hour * t.worker.chips / 3600 / rate * 1e6:.2g} per 1M tokens at that rate"
        if usd_chip_hour
        else ""
    )
    return [
        f"worker {t.worker.machine_type} ({t.worker.vcpus} vCPUs, {t.worker.chips} chip(s)): chips at most "
        f"{chips_bound:,.0f} tokens/s (the compiled bound, no efficiency applied; `docbeam estimate` applies one); "
        f"host {host_rate:,.0f} tokens/s, {what} ({host.basis()}); tokens here are encoder tokens, taken for "
        "document tokens (chunks only: window overlaps and --extract add a few more)",
        f"binds: the {binds}, {rate:,.0f} tokens/s"
        + (f" ({rate / chips_bound:.0%} of the chips' bound)" if rate < chips_bound else "")
        + usd
        + " (the whole worker; the per-chip price above is the chips' alone)",
    ]


def check_job(job: dict, hardware: str) -> bool:
    """`check` for a job given as Beam options (the Airflow DAG's): what the encoder depends on."""
    encoder_flags = {k: v for k, v in job.items() if k not in ("input", "output", "overwrite", "reuse")}
    return check(PipelineOptions.from_dictionary(encoder_flags), hardware)


def _chip_hour_usd(t: aot.Target, pricing: str | None) -> float:
    try:
        return float(PriceTable.load(pricing).entry(t.accelerator.price_id)["usd"])
    except PricingError:  # no price entry: no $ column; the compile check still holds
        return 0.0
