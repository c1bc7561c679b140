"""The plain Beam entry point: `python -m pipeline.run --input GLOB --output DIR [...]`.

Used by `docbeam run`, Airflow and Dataflow. Resolves the plan (checkpoint, kernel choice,
extractors) before anything starts, fails early on inputs that match nothing, runs the job,
then checks the accounting and writes `_manifest.json`.
"""

import dataclasses
import json
import logging
import os
import sys
import time
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import GoogleCloudOptions, PipelineOptions

import kernels
from model.checkpoint import describe_checkpoint
from model.config import CheckpointError
from pipeline import extractors, graph, manifest, outputs, report, runners, storage, waves
from pipeline.chunking import Windowing
from pipeline.encoder_runtime import EncoderSettings, finish_profiles
from pipeline.metering import NAMESPACE
from pipeline.options import DocbeamOptions, extract_list
from pipeline.packing import PackSpec
from pipeline.parsers import ParseConfig
from pipeline.pricing import PriceTable, PricingError, Rates

log = logging.getLogger("docbeam")


class UsageError(ValueError):
    """Bad command line or inputs: reported in one line, before the job starts."""


@dataclass
class RunResult:
    manifest: dict
    stage_totals: dict
    wall_seconds: float
    cost: dict


def check_inputs(globs: list[str]) -> None:
    if not globs:
        raise UsageError("--input is required (one or more globs, local or gs://)")
    results = FileSystems.match(globs, limits=[1] * len(globs))
    empty = [g for g, r in zip(globs, results) if not r.metadata_list]
    if empty:
        raise UsageError(f"--input matches no files: {', '.join(empty)}")


TABLES = ("documents", "chunks", "extractions", "errors", "_cost", "_progress")
FILES = ("_manifest.json", waves.JOB_RECORD)


def prepare_output(output: str, overwrite: bool) -> None:
    """Refuse to mix a new run's files with an old run's, unless told to replace them."""
    old = outputs.existing(output, TABLES, FILES)
    if old and not overwrite:
        raise UsageError(
            f"{output} already holds a run's outputs ({len(old)} files); "
            "pass --overwrite to replace them (or --resume to continue that run)"
        )
    for path in old:
        storage.delete(path)


def absolute(glob: str) -> str:
    # Local paths become absolute so sources and derived doc_ids do not depend on the cwd.
    return glob if "://" in glob else os.path.abspath(glob)


def make_plan(options: PipelineOptions) -> graph.JobPlan:
    d = options.view_as(DocbeamOptions)
    if not d.output:
        raise UsageError("--output is required (a folder or gs:// prefix)")
    d.input = [absolute(g) for g in d.input or []]
    check_inputs(d.input)
    try:
        ckpt = describe_checkpoint(storage.checkpoint_dir(d.model, d.model_sha256))
    except CheckpointError as exc:
        raise UsageError(f"--model: {exc}") from exc
    if d.model_sha256 and d.model_sha256 != ckpt.weights_sha256:
        raise UsageError(
            f"{ckpt.path}/model.safetensors sha256 {ckpt.weights_sha256} != --model-sha256 {d.model_sha256}"
        )
    d.max_seq_len = d.max_seq_len or ckpt.config.max_seq_len  # the window the model was trained on
    if d.max_seq_len > ckpt.config.max_positions:
        raise UsageError(f"--max-seq-len {d.max_seq_len} exceeds the model's {ckpt.config.max_positions} positions")
    try:
        windowing = Windowing(d.max_seq_len, d.stride)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    beam_labels = options.view_as(GoogleCloudOptions).labels or []
    if "labels" in extract_list(d.extract) and any(lb.endswith((".json", ".yaml", ".yml")) for lb in beam_labels):
        raise UsageError("--labels is Beam's Dataflow job-label flag; give the label file as --label-file FILE")
    try:
        kinds = extract_list(d.extract)
    except ValueError as exc:
        raise UsageError(f"--extract: {exc}") from exc
    try:
        lo, hi = (int(x) for x in d.keyphrase_ngrams.split(","))
    except ValueError:
        if "keyphrases" in kinds:
            raise UsageError(f"--keyphrase-ngrams {d.keyphrase_ngrams!r}: expected MIN,MAX, e.g. 1,2") from None
        lo, hi = 1, 2
    settings = {
        "labels": {"labels_file": d.label_file},
        "keyphrases": {"ngrams": (lo, hi), "reference": d.keyphrase_reference},
        "summary": {"top_k": d.summary_sentences},
    }
    try:
        exs = extractors.build(kinds, settings)
    except (extractors.ExtractorError, ValueError) as exc:
        raise UsageError(f"--extract {d.extract}: {exc}") from exc
    pack = PackSpec(rows=d.batch_rows, seq_len=d.max_seq_len)
    return graph.JobPlan(
        globs=list(d.input),
        output=d.output,
        parse=ParseConfig(d.id_field, d.text_field, d.max_doc_bytes, d.max_decompressed_bytes),
        windowing=windowing,
        encoder=EncoderSettings(d.model, d.model_sha256, d.attention, d.dtype, pack, d.profile, d.leak_threshold_mb),
        model_name=d.model or ckpt.name,
        weights_sha256=ckpt.weights_sha256,
        config=ckpt.config,
        model_path=d.model,
        extractors=exs,
    )


def resolve_attention(plan: graph.JobPlan, platform: str | None = None) -> dict:
    """The choice the workers will make, made here first so a bad request fails before the job."""
    shape = (plan.pack.rows, plan.pack.seq_len, plan.config.heads, plan.config.head_dim)
    platform = platform or kernels.platform_of_backend()
    try:
        choice = kernels.get(plan.encoder.attention, platform=platform, shape=shape, dtype=plan.encoder.dtype)
    except kernels.KernelUnavailable as exc:
        raise UsageError(str(exc)) from exc
    return {"requested": plan.encoder.attention, "used": choice.name, "reason": choice.reason, "platform": platform}


def stage_totals(result) -> dict[str, dict[str, int]]:
    """Committed docbeam metrics per stage: {stage: {counter: value}}."""
    totals: dict[str, dict[str, int]] = {}
    res = result.metrics().query(MetricsFilter())
    for kind in ("counters", "gauges"):
        for m in res[kind]:
            ns = m.key.metric.namespace
            if not ns.startswith(NAMESPACE + "."):
                continue
            value = m.committed if m.committed is not None else m.attempted
            value = getattr(value, "value", value)  # gauges carry a GaugeResult
            stage = totals.setdefault(ns[len(NAMESPACE) + 1 :], {})
            name = m.key.metric.name
            stage[name] = max(stage.get(name, 0), value) if kind == "gauges" else stage.get(name, 0) + value
    return totals


def run(argv: list[str], handler=None) -> RunResult:
    """Plan, run (wave by wave) and finalise one job. `handler` replaces the encoder's
    ModelHandler (tests use it)."""
    storage.ensure_emulator_credentials()  # no-op unless STORAGE_EMULATOR_HOST is set
    options = PipelineOptions(argv)
    d = options.view_as(DocbeamOptions)
    plan = make_plan(options)
    local = runners.is_local(options)
    rates = make_rates(d, local=local)
    if d.budget_usd is not None:
        check_budget(d, rates.hardware)
    records = waves.committed(plan.output) if d.resume else []
    if d.resume:
        stale = waves.remove_uncommitted(plan.output, records)
        log.info("resume: %d wave(s) committed, %d stale file(s) removed", len(records), len(stale))
    else:
        prepare_output(plan.output, d.overwrite)
    listing = list_files(plan.globs) if d.resume or d.wave_files else None
    attention = (
        resolve_attention(plan)
        if local
        else {
            "requested": d.attention,
            "used": "(decided on the workers)",
            "platform": "remote",
            "reason": "remote runner: each worker decides for its own platform; see used_by_workers",
        }
    )
    log.info("attention %s", attention["reason"])
    totals = [r["totals"] for r in records]
    wall = sum(r["wall_seconds"] for r in records)
    todo = waves.plan(plan.globs, None if listing is None else sorted(listing), d.wave_files, records)
    for i, wave in enumerate(todo, 1):
        log.info("wave %d/%d (%s): %d input(s)", i, len(todo), wave.key, len(wave.inputs))
        # A wave of listed files reads exactly those paths: never matched again as globs,
        # where a name like "a[1].jsonl" would match nothing and be lost.
        files = None if listing is None else [(f, listing[f]) for f in wave.inputs]
        wave_plan = dataclasses.replace(
            plan,
            globs=wave.inputs,
            files=files,
            file_prefix=wave.key,
            committed_documents=waves.document_files(plan.output, records),
        )
        waves.record_job(plan.output, argv, wave, [f for f, _ in files] if files else None)
        t0 = time.perf_counter()
        p = beam.Pipeline(runner=runners.resolve(options), options=options)
        graph.build(p, wave_plan, handler)
        result = p.run()
        result.wait_until_finish()
        finish_profiles()
        wave_totals, wave_wall = stage_totals(result), time.perf_counter() - t0
        done = [f for f, _ in files] if files else sorted(list_files(wave.inputs))
        waves.commit(plan.output, wave, done, wave_totals, wave_wall)
        records.append({"key": wave.key})
        totals.append(wave_totals)
        wall += wave_wall
    return finalize(plan, options, waves.merge_totals(totals), wall, attention, rates, local)


def list_files(globs: list[str]) -> dict[str, int]:
    """path -> size of every file the globs match."""
    return {m.path: m.size_in_bytes for r in FileSystems.match(globs) for m in r.metadata_list}


SAMPLE_FLAGS = (
    "extract",
    "label_file",
    "keyphrase_ngrams",
    "keyphrase_reference",
    "summary_sentences",
    "max_seq_len",
    "stride",
    "model",
    "model_sha256",
    "dtype",
    "batch_rows",
    "attention",
    "id_field",
    "text_field",
    "pricing",
)


def check_budget(d: DocbeamOptions, hardware: str, sample: int = 200) -> dict:
    """Project the whole job's cost from a sample run; refuse to start over budget."""
    from pipeline.estimate import estimate, render

    flags = [f"--{k}={getattr(d, k)}" for k in SAMPLE_FLAGS if getattr(d, k, None) not in (None, "")]
    est = estimate(list(d.input), flags, sample_size=sample, hardware=hardware, pricing=d.pricing)
    projected = est["projection"]["usd"]
    log.info("budget check: projected $%.2f against --budget-usd %.2f", projected, d.budget_usd)
    if projected > d.budget_usd:
        raise UsageError(
            f"projected cost ${projected:,.2f} exceeds --budget-usd {d.budget_usd:,.2f}; not starting.\n{render(est)}"
        )
    return est


def make_rates(d: DocbeamOptions, local: bool) -> Rates:
    hardware = d.hardware or ("cpu" if local else None)
    if hardware is None:
        raise UsageError("--hardware is required off this machine (cpu, tpu-v5e, l4, ...): it prices the run")
    try:
        return Rates(PriceTable.load(d.pricing), hardware)
    except PricingError as exc:
        raise UsageError(str(exc)) from exc


def finalize(
    plan, options: PipelineOptions, totals: dict, wall: float, attention: dict, rates: Rates, local: bool
) -> RunResult:
    """After the job: read the outputs back, check the accounting, write the manifest and the cost report."""
    parse = totals.get("parse", {})
    check = manifest.accounting(plan.output, parse.get("elements_out", 0) + parse.get("rejected", 0))
    written = outputs.existing(plan.output, TABLES)
    chunks = outputs.read_table(plan.output, "chunks", ["doc_id"])
    extr = outputs.read_table(plan.output, "extractions", ["doc_id"])
    gcs_reads = totals.get("match", {}).get("elements_out", 0) if any(g.startswith("gs://") for g in plan.globs) else 0
    gcs_writes = len(written) + 4 if plan.output.startswith("gs://") else 0
    cost = report.build(
        totals,
        wall_seconds=wall,
        documents=check["ok"],
        rates=rates,
        remote=not local,
        storage_usd=rates.gcs_usd(gcs_reads, gcs_writes),
    )
    report.write(cost, plan.output)
    import jax

    man = manifest.build(
        plan=plan,
        options=options.get_all_options(drop_default=True),
        stage_totals=totals,
        check=check,
        attention=attention,
        wall_seconds=wall,
        devices=[str(dv) for dv in jax.local_devices()] if local else [],
        chunk_rows=chunks.num_rows if chunks is not None else 0,
        extraction_rows=extr.num_rows if extr is not None else 0,
    )
    man["cost"] = {
        "usd": cost["totals"]["cost_usd"],
        "usd_per_1m_tokens": cost["totals"]["usd_per_1m_tokens"],
        "hardware": rates.hardware,
        "report": "_cost/report.md",
    }
    man["storage_retries"] = storage.retry_count()
    storage.write_text(f"{plan.output.rstrip('/')}/_manifest.json", json.dumps(man, indent=2, default=str))
    if not check["holds"]:
        log.error("accounting check FAILED: %s", json.dumps(man["accounting"]))
    return RunResult(man, totals, wall, cost)


def summary(res: RunResult) -> str:
    c = res.manifest["counts"]
    enc = res.stage_totals.get("encode", {})
    tokens = enc.get("tokens", 0)
    pad = enc.get("pad_tokens", 0)
    out = res.manifest["options"].get("output")
    lines = [
        f"documents: {c['read']} read, {c['ok']} ok, {c['rejected']} rejected"
        + (f" ({', '.join(f'{k}: {v}' for k, v in sorted(c['rejected_by_error'].items()))})" if c["rejected"] else ""),
        f"tokens:    {tokens:,} embedded in {c['chunks']:,} chunks, padding {pad / max(tokens + pad, 1):.1%}, "
        f"attention {res.manifest['attention']['used']}",
        f"time:      {res.wall_seconds:.1f}s wall, {tokens / max(res.wall_seconds, 1e-9):,.0f} tokens/s, "
        f"{c['ok'] / max(res.wall_seconds, 1e-9):.1f} docs/s",
        report.summary_line(res.cost),
        f"accounting: {'ok' if res.manifest['accounting']['holds'] else 'FAILED'}",
        f"output:    {out}/documents, chunks, extractions, errors, _manifest.json, _cost/report.md",
    ]
    return "\n".join(lines)


def _not_beam_resource_noise(record: logging.LogRecord) -> bool:
    # Beam 2.77 imports `resource` together with its torch-only ModelManager, so without torch
    # RunInference warns on every bundle that memory "cannot be fetched". docbeam meters memory
    # itself (metering, memwatch); the warning is noise.
    return not record.getMessage().startswith("Resource module is not available")


def configure_logging() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("docbeam").setLevel(logging.INFO)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_not_beam_resource_noise)


def main(argv: list[str] | None = None) -> int:
    configure_logging()
    argv = sys.argv[1:] if argv is None else argv
    if "-h" in argv or "--help" in argv:
        from pipeline.cli import cmd_run

        return cmd_run(["--help"])
    try:
        res = run(argv)
    except UsageError as exc:
        print(f"docbeam: {exc}", file=sys.stderr)
        return 2
    print(summary(res))
    return 0 if res.manifest["accounting"]["holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
