"""The plain Beam entry point: `python -m pipeline.run --input GLOB --output DIR [...]`.

Used by `docbeam run`, Airflow and Dataflow. Resolves the plan (checkpoint, kernel choice,
extractors) before anything starts, fails early on inputs that match nothing, runs the job,
then checks the accounting and writes `_manifest.json`.
"""

import json
import logging
import os
import sys
import time
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

import kernels
from model.checkpoint import describe_checkpoint
from pipeline import extractors, graph, manifest, outputs, runners
from pipeline.chunking import Windowing
from pipeline.encoder_runtime import EncoderSettings
from pipeline.metering import NAMESPACE
from pipeline.options import DocbeamOptions, extract_list
from pipeline.packing import PackSpec
from pipeline.parsers import ParseConfig

log = logging.getLogger("docbeam")


class UsageError(ValueError):
    """Bad command line or inputs: reported in one line, before the job starts."""


@dataclass
class RunResult:
    manifest: dict
    stage_totals: dict
    wall_seconds: float


def check_inputs(globs: list[str]) -> None:
    if not globs:
        raise UsageError("--input is required (one or more globs, local or gs://)")
    results = FileSystems.match(globs, limits=[1] * len(globs))
    empty = [g for g, r in zip(globs, results) if not r.metadata_list]
    if empty:
        raise UsageError(f"--input matches no files: {', '.join(empty)}")


TABLES = ("documents", "chunks", "extractions", "errors", "_cost")


def prepare_output(output: str, overwrite: bool) -> None:
    """Refuse to mix a new run's files with an old run's, unless told to replace them."""
    old = [m.path for t in TABLES for m in FileSystems.match([f"{output.rstrip('/')}/{t}/*"])[0].metadata_list]
    manifest_path = f"{output.rstrip('/')}/_manifest.json"
    if FileSystems.exists(manifest_path):
        old.append(manifest_path)
    if old and not overwrite:
        raise UsageError(
            f"{output} already holds a run's outputs ({len(old)} files); "
            "pass --overwrite to replace them (or --resume to continue that run)"
        )
    if old:
        FileSystems.delete(old)


def absolute(glob: str) -> str:
    # Local paths become absolute so sources and derived doc_ids do not depend on the cwd.
    return glob if "://" in glob else os.path.abspath(glob)


def make_plan(d: DocbeamOptions) -> graph.JobPlan:
    if not d.output:
        raise UsageError("--output is required (a folder or gs:// prefix)")
    d.input = [absolute(g) for g in d.input or []]
    check_inputs(d.input)
    local_model = d.model if d.model and not d.model.startswith("gs://") else None
    if d.model and d.model.startswith("gs://"):
        from pipeline.storage import localize_checkpoint

        local_model = str(localize_checkpoint(d.model, expected_sha256=d.model_sha256))
    ckpt = describe_checkpoint(local_model)
    if d.model_sha256 and d.model_sha256 != ckpt.weights_sha256:
        raise UsageError(
            f"{ckpt.path}/model.safetensors sha256 {ckpt.weights_sha256} != --model-sha256 {d.model_sha256}"
        )
    if d.max_seq_len > ckpt.config.max_positions:
        raise UsageError(f"--max-seq-len {d.max_seq_len} exceeds the model's {ckpt.config.max_positions} positions")
    try:
        windowing = Windowing(d.max_seq_len, d.stride)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    try:
        exs = extractors.build(extract_list(d.extract), d.label_file)
    except (extractors.ExtractorError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    pack = PackSpec(rows=d.batch_rows, seq_len=d.max_seq_len)
    return graph.JobPlan(
        globs=list(d.input),
        output=d.output,
        parse=ParseConfig(d.id_field, d.text_field, d.max_doc_bytes, d.max_decompressed_bytes),
        windowing=windowing,
        encoder=EncoderSettings(d.model, d.model_sha256, d.attention, d.dtype, pack),
        model_name=ckpt.name,
        weights_sha256=ckpt.weights_sha256,
        dim=ckpt.config.hidden,
        tokenizer_dir=local_model,
        extractors=exs,
    )


def resolve_attention(plan: graph.JobPlan, platform: str | None = None) -> dict:
    """The choice the workers will make, made here first so a bad request fails before the job."""
    ckpt = describe_checkpoint(plan.tokenizer_dir)
    cfg = ckpt.config
    shape = (plan.pack.rows, plan.pack.seq_len, cfg.heads, cfg.head_dim)
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


def run(argv: list[str]) -> RunResult:
    options = PipelineOptions(argv)
    d = options.view_as(DocbeamOptions)
    plan = make_plan(d)
    prepare_output(plan.output, d.overwrite)
    local = runners.is_local(options)
    attention = (
        resolve_attention(plan)
        if local
        else {
            "requested": d.attention,
            "used": "(decided on workers)",
            "reason": "remote runner: see used_by_workers",
            "platform": "remote",
        }
    )
    log.info("attention %s", attention["reason"])
    t0 = time.perf_counter()
    p = beam.Pipeline(runner=runners.resolve(options), options=options)
    graph.build(p, plan)
    result = p.run()
    result.wait_until_finish()
    wall = time.perf_counter() - t0
    totals = stage_totals(result)
    parse = totals.get("parse", {})
    check = manifest.accounting(plan.output, parse.get("elements_out", 0) + parse.get("rejected", 0))
    chunks = outputs.read_table(plan.output, "chunks", ["doc_id"])
    extr = outputs.read_table(plan.output, "extractions", ["doc_id"])
    import jax

    man = manifest.build(
        plan=plan,
        options={k: v for k, v in options.get_all_options(drop_default=True).items()},
        stage_totals=totals,
        check=check,
        attention=attention,
        wall_seconds=wall,
        devices=[str(dv) for dv in jax.local_devices()] if local else [],
        chunk_rows=chunks.num_rows if chunks is not None else 0,
        extraction_rows=extr.num_rows if extr is not None else 0,
    )
    outputs.write_text(f"{plan.output.rstrip('/')}/_manifest.json", json.dumps(man, indent=2, default=str))
    if not check["holds"]:
        log.error("accounting check FAILED: %s", json.dumps(man["accounting"]))
    return RunResult(man, totals, wall)


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
        f"accounting: {'ok' if res.manifest['accounting']['holds'] else 'FAILED'}",
        f"output:    {out}/documents, chunks, extractions, errors, _manifest.json",
    ]
    return "\n".join(lines)


def configure_logging() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("docbeam").setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    configure_logging()
    argv = sys.argv[1:] if argv is None else argv
    try:
        res = run(argv)
    except UsageError as exc:
        print(f"docbeam: {exc}", file=sys.stderr)
        return 2
    print(summary(res))
    return 0 if res.manifest["accounting"]["holds"] else 1


if __name__ == "__main__":
    sys.exit(main())
