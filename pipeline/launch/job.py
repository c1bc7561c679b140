"""One docbeam job from its flags to its manifest: plan, run wave by wave, finalise.

Used by `docbeam run`, `python -m pipeline.run` (Airflow, Dataflow) and the tests. After the
Beam job(s) it reads the outputs back, checks the accounting and writes `_manifest.json` and
`_cost/`; `launch.finalize` does the same for a Dataflow job whose launcher did not wait.
"""

import dataclasses
import json
import logging
from dataclasses import dataclass

from apache_beam.options.pipeline_options import PipelineOptions

from pipeline.core import tables
from pipeline.core.flags import UsageError
from pipeline.cost import report
from pipeline.cost.pricing import PriceTable, PricingError, Rates
from pipeline.graph import runners
from pipeline.graph.plan import JobPlan
from pipeline.io import outputs, storage
from pipeline.launch import manifest, waves
from pipeline.launch.estimate import estimate, render
from pipeline.launch.execute import execute
from pipeline.launch.options import DocbeamOptions
from pipeline.launch.plan import list_files, make_plan, remote_attention, resolve_attention, stage_for_workers

log = logging.getLogger("docbeam")


@dataclass
class RunResult:
    manifest: dict
    stage_totals: dict
    wall_seconds: float
    cost: dict


def prepare_output(output: str, overwrite: bool) -> None:
    """Refuse to mix a new run's files with an old run's, unless told to replace them."""
    old = outputs.existing(output, tables.RUN_FOLDERS, tables.RUN_FILES)
    if old and not overwrite:
        raise UsageError(
            f"{output} already holds a run's outputs ({len(old)} files); "
            "pass --overwrite to replace them (or --resume to continue that run)"
        )
    for path in old:
        storage.delete(path)


def make_rates(d: DocbeamOptions, local: bool) -> Rates:
    hardware = d.hardware or ("cpu" if local else None)
    if hardware is None:
        raise UsageError("--hardware is required off this machine (cpu, tpu-v5e, l4, ...): it prices the run")
    try:
        return Rates(PriceTable.load(d.pricing), hardware)
    except PricingError as exc:
        raise UsageError(str(exc)) from exc


def run(argv: list[str], handler=None) -> RunResult:
    """Plan, run (wave by wave) and finalise one job. `handler` replaces the encoder's
    ModelHandler (tests use it)."""
    storage.ensure_emulator_credentials()  # no-op unless STORAGE_EMULATOR_HOST is set
    options = PipelineOptions(argv)
    d = options.view_as(DocbeamOptions)
    plan = make_plan(options)
    local = runners.is_local(options)
    if not local:
        plan = stage_for_workers(plan, options)
    rates = make_rates(d, local=local)
    if d.budget_usd is not None:
        check_budget(plan, options, d, rates.hardware)
    records = waves.committed(plan.output) if d.resume else []
    if d.resume:
        stale = waves.remove_uncommitted(plan.output, records)
        log.info("resume: %d wave(s) committed, %d stale file(s) removed", len(records), len(stale))
    else:
        prepare_output(plan.output, d.overwrite)
    listing = list_files(plan.globs) if d.resume or d.wave_files else None
    attention = resolve_attention(plan) if local else remote_attention(d.attention)
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
        wave_totals, wave_wall = execute(wave_plan, options, handler)
        done = [f for f, _ in files] if files else sorted(list_files(wave.inputs))
        waves.commit(plan.output, wave, done, wave_totals, wave_wall)
        records.append({"key": wave.key})
        totals.append(wave_totals)
        wall += wave_wall
    return finalize(plan, options, waves.merge_totals(totals), wall, attention, rates, local)


def check_budget(plan: JobPlan, options: PipelineOptions, d: DocbeamOptions, hardware: str) -> dict:
    """Project the whole job's cost from a sample run; refuse to start over budget."""
    est = estimate(plan, options, sample_size=200, hardware=hardware, pricing=d.pricing)
    projected = est["projection"]["usd"]
    log.info("budget check: projected $%.2f against --budget-usd %.2f", projected, d.budget_usd)
    if projected > d.budget_usd:
        raise UsageError(
            f"projected cost ${projected:,.2f} exceeds --budget-usd {d.budget_usd:,.2f}; not starting.\n{render(est)}"
        )
    return est


def finalize(
    plan: JobPlan, options: PipelineOptions, totals: dict, wall: float, attention: dict, rates: Rates, local: bool
) -> RunResult:
    """After the job: read the outputs back, check the accounting, write the manifest and the cost report."""
    parse = totals.get("parse", {})
    check = manifest.accounting(plan.output, parse.get("elements_out", 0) + parse.get("rejected", 0))
    written = outputs.existing(plan.output, tables.RUN_FOLDERS)
    chunks = outputs.read_table(plan.output, tables.CHUNKS, ["doc_id"])
    extr = outputs.read_table(plan.output, tables.EXTRACTIONS, ["doc_id"])
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
    storage.write_text(tables.join(plan.output, tables.MANIFEST), json.dumps(man, indent=2, default=str))
    if not check["holds"]:
        log.error("accounting check FAILED: %s", json.dumps(man["accounting"]))
    return RunResult(man, totals, wall, cost)
