"""One docbeam job from its flags to its manifest: plan, run wave by wave, finalise.

Used by `docbeam run`, `python -m docbeam.pipeline.run` (Airflow, Dataflow) and the tests. After the
Beam job(s) it reads the outputs back, checks the accounting and writes `_manifest.json` and
`_cost/`; `launch.finalize` does the same for a Dataflow job whose launcher did not wait.
"""

import dataclasses
import json
import logging
import os
import signal
import threading
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass

from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.exit_status import ExitStatus
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost import report
from docbeam.pipeline.cost.pricing import PriceTable, PricingError, Rates
from docbeam.pipeline.graph import runners
from docbeam.pipeline.graph.job_plan import JobPlan, Reuse
from docbeam.pipeline.io import outputs, storage
from docbeam.pipeline.launch import manifest, waves
from docbeam.pipeline.launch.estimate import estimate, render
from docbeam.pipeline.launch.execute import execute
from docbeam.pipeline.launch.options import DocbeamOptions
from docbeam.pipeline.launch.planner import (
    list_files,
    make_plan,
    remote_attention,
    resolve_attention,
    stage_for_workers,
)
from docbeam.pipeline.launch.progress_display import Display

log = logging.getLogger("docbeam")
# Seconds between plain progress lines when stderr is not a terminal (CI, Airflow logs).
PROGRESS_SECONDS = float(os.environ.get("DOCBEAM_PROGRESS_SECONDS", "30"))


@dataclass
class RunResult:
    manifest: dict
    stage_totals: dict
    wall_seconds: float
    cost: dict


class Stopped(Exception):
    """A run that ended before its last wave; `status` is its exit status."""

    status: ExitStatus


class BudgetSpent(Stopped):
    """--budget-usd: the projection is over it (nothing started), or it was reached between
    waves (an input that fit the budget sample)."""

    status = ExitStatus.REJECTED


class Interrupted(Stopped):
    """Ctrl-C during a run: what was committed, and how to go on."""

    status = ExitStatus.INTERRUPTED

    def __init__(self, output: str, committed: int, waves: int):
        self.output, self.committed, self.waves = output, committed, waves
        if waves == 1:
            advice = (
                "nothing was committed (one wave); rerun with --overwrite, or with --wave-files N to commit "
                "as it goes and --resume after an interruption"
            )
        else:
            advice = f"{committed} of {waves} waves committed; run the same command with --resume to continue"
        super().__init__(f"interrupted: {advice} ({output})")


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
    records = waves.committed(plan.output) if d.resume else []
    if d.resume:
        stale = waves.remove_uncommitted(plan.output, records)
        log.info("resume: %d wave(s) committed, %d stale file(s) removed", len(records), len(stale))
    else:
        prepare_output(plan.output, d.overwrite)
    if d.budget_usd is not None and not d.resume:
        plan = check_budget(plan, options, d, rates.hardware)
    listing = list_files(plan.inputs) if d.resume or d.wave_files else None
    attention = resolve_attention(plan) if local else remote_attention(d.attention)
    log.info(
        "%d file(s), %.1f MiB -> %s; model %s; attention %s",
        plan.input_files,
        plan.input_bytes / 2**20,
        plan.output,
        plan.model_name,
        attention["reason"],
    )
    totals = [r["totals"] for r in records]
    wall = sum(r["wall_seconds"] for r in records)
    todo = waves.plan(plan.globs, None if listing is None else sorted(listing), d.wave_files, records)
    all_waves = len(records) + len(todo)
    display = Display(plan.input_files, plan.input_bytes, interval=PROGRESS_SECONDS) if local else nullcontext()
    budget = (d.budget_usd, rates) if d.budget_usd is not None else None
    try:
        with display, _ctrl_c() as pressed:
            totals, wall = _run_waves(
                plan, options, argv, todo, listing, records, totals, wall, handler, budget, pressed
            )
    except KeyboardInterrupt:
        raise Interrupted(plan.output, len(waves.committed(plan.output)), all_waves) from None
    timeline = display.timeline if local else []
    return finalize(plan, options, waves.merge_totals(totals), wall, attention, rates, local, timeline)


@contextmanager
def _ctrl_c():
    """Ctrl-C raises KeyboardInterrupt as usual and is also remembered: Beam's runner can
    swallow the exception inside a wave (it then finishes that wave), so the wave loop checks
    the flag too and stops at the next wave at the latest."""
    pressed = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield pressed
        return

    def on_sigint(signum, frame):
        pressed.set()
        signal.default_int_handler(signum, frame)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield pressed
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_waves(
    plan, options, argv, todo, listing, records, totals, wall, handler, budget, pressed
) -> tuple[list[dict], float]:
    for i, wave in enumerate(todo, 1):
        if pressed.is_set():
            raise KeyboardInterrupt
        log.info("wave %d/%d (%s): %d input(s)", i, len(todo), wave.key, len(wave.inputs))
        # A wave of listed files reads exactly those paths: never matched again as globs,
        # where a name like "a[1].jsonl" would match nothing and be lost.
        files = None if listing is None else [(f, *listing[f]) for f in wave.inputs]
        wave_plan = dataclasses.replace(
            plan,
            files=files,
            file_prefix=wave.key,
            committed_documents=waves.document_files(plan.output, records),
        )
        waves.record_job(plan.output, argv, wave, [f for f, *_ in files] if files else None)
        wave_totals, wave_wall = execute(wave_plan, options, handler)
        done = [f for f, *_ in files] if files else sorted(list_files(plan.inputs))
        waves.commit(plan.output, wave, done, wave_totals, wave_wall)
        records.append({"key": wave.key})
        totals.append(wave_totals)
        wall += wave_wall
        if budget and i < len(todo) and wall * budget[1].usd_per_hour / 3600 > budget[0]:
            spent = report.money(wall * budget[1].usd_per_hour / 3600)
            raise BudgetSpent(
                f"stopped after wave {i} of {len(todo)}: {spent} spent, over --budget-usd {budget[0]}; the waves "
                f"done are committed: --resume (with a higher --budget-usd) continues ({plan.output})"
            )
    return totals, wall


def check_budget(plan: JobPlan, options: PipelineOptions, d: DocbeamOptions, hardware: str) -> JobPlan:
    """Project the whole job's cost from a sample run; refuse to start over budget. The
    sample's outputs stay under the output and the job reuses them (each document is encoded
    once); an input no bigger than the sample is simply run, held to the budget as it goes."""
    sample_out = tables.join(plan.output, tables.BUDGET_SAMPLE)
    est = estimate(
        plan, options, sample_size=d.budget_sample, hardware=hardware, pricing=d.pricing, sample_output=sample_out
    )
    if est is None:
        log.info("budget check: the input fits the --budget-sample; it runs held to --budget-usd %s", d.budget_usd)
        return plan
    projected = est["projection"]["usd"]
    log.info("budget check: projected %s against --budget-usd %s", report.money(projected), d.budget_usd)
    if projected > d.budget_usd:
        storage.delete_folder(sample_out)
        raise BudgetSpent(
            f"projected cost {report.money(projected)} exceeds --budget-usd {d.budget_usd}; not starting.\n"
            + render(est)
        )
    if plan.reuse is not None:  # --reuse of an earlier run wins; the sample is then run twice
        return plan

    def files(table: str) -> list[str]:
        return outputs.files(sample_out, table, tables.SUFFIX[table])

    sample = Reuse(sample_out, files(tables.DOCUMENTS), files(tables.CHUNKS), files(tables.EXTRACTIONS), True, True)
    return dataclasses.replace(plan, reuse=sample)


def _reuse_record(plan: JobPlan, totals: dict) -> dict:
    """What --reuse did: reused and encoded documents and tokens, and the removed documents,
    whose ids go to removed/doc_ids.txt."""
    removed = [] if plan.reuse.budget_sample else manifest.removed_since(plan.reuse.output, plan.output)
    if not plan.reuse.budget_sample:
        storage.write_text(tables.join(plan.output, tables.REMOVED, "doc_ids.txt"), "".join(f"{i}\n" for i in removed))
    reused, encoded = totals.get(Stage.REUSE, {}), totals.get(Stage.ASSEMBLE, {})
    return {
        "from": plan.reuse.output,
        "budget_sample": plan.reuse.budget_sample,
        "same_settings": plan.reuse.same_settings,
        "documents_reused": int(reused.get("elements_out", 0)),
        "tokens_reused": int(reused.get("tokens", 0)),
        "documents_encoded": int(encoded.get("elements_out", 0)),
        "tokens_encoded": int(encoded.get("tokens", 0)),
        "documents_removed": len(removed),
    }


def finalize(
    plan: JobPlan,
    options: PipelineOptions,
    totals: dict,
    wall: float,
    attention: dict,
    rates: Rates,
    local: bool,
    timeline: list[dict] | None = None,
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
        timeline=timeline or [],
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
        "usd_per_1m_document_tokens": cost["totals"]["usd_per_1m_document_tokens"],
        "usd_per_1k_documents": cost["totals"]["usd_per_1k_documents"],
        "hardware": rates.hardware,
        "report": "_cost/report.md",
    }
    if plan.reuse is not None:
        man["reuse"] = _reuse_record(plan, totals)
    man["storage_retries"] = storage.retry_count()
    d = options.view_as(DocbeamOptions)
    man["verdict"] = manifest.verdict(check, d.max_rejected, cost["totals"]["cost_usd"], d.budget_usd)
    if plan.reuse is not None and plan.reuse.budget_sample:  # copied into this run: no longer needed
        storage.delete_folder(tables.join(plan.output, tables.BUDGET_SAMPLE))
    storage.write_text(tables.join(plan.output, tables.MANIFEST), json.dumps(man, indent=2, default=str))
    if not check["holds"]:
        log.error("accounting check FAILED: %s", json.dumps(man["accounting"]))
    return RunResult(man, totals, wall, cost)
