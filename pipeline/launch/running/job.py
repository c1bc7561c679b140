"""One docbeam job from its flags to its manifest: plan, run wave by wave, finalise.

Used by `docbeam run`, `python -m docbeam.pipeline.run` (Airflow, Dataflow) and the tests. After the
Beam job(s) it reads the outputs back, checks the accounting and writes `_manifest.json` and
`_cost/`; `launch.commands.dataflow_finish` does the same for a Dataflow job whose launcher did not wait.
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

from docbeam.pipeline.core import interrupt, tables
from docbeam.pipeline.core.exit_status import ExitStatus
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.sink_uri import redact, redact_args, without_sinks
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.core.vector_format import INT8
from docbeam.pipeline.cost import report
from docbeam.pipeline.cost.pricing import PriceTable, PricingError, Rates
from docbeam.pipeline.encode import cpu_devices
from docbeam.pipeline.graph import host_pool, runners
from docbeam.pipeline.graph.job_plan import JobPlan, Reuse
from docbeam.pipeline.ingest import language_id
from docbeam.pipeline.io import outputs, storage
from docbeam.pipeline.launch.after_run import manifest, sink_sync, vector_record
from docbeam.pipeline.launch.commands.estimate import estimate, render
from docbeam.pipeline.launch.display.progress_display import Display
from docbeam.pipeline.launch.planning import model_languages
from docbeam.pipeline.launch.planning.planner import (
    encoder_platform,
    list_files,
    make_plan,
    remote_attention,
    resolve_attention,
    stage_for_workers,
)
from docbeam.pipeline.launch.running import run_folder, waves
from docbeam.pipeline.launch.running.execute import execute
from docbeam.pipeline.launch.running.options import DocbeamOptions

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


def prepare_output(output: str, overwrite: bool, sinks: bool = False) -> None:
    """Refuse to mix a new run's files with an old run's, unless told to replace them; never
    delete what docbeam did not write (run_folder). With `sinks`, the replaced run's doc_ids
    are kept (manifest.REPLACED_IDS): the stores are made to drop those this run lacks."""
    old = run_folder.check_output(output, overwrite, resume=False)
    run_folder.check_can_delete(output, old, "--overwrite")
    table = outputs.read_table(output, tables.DOCUMENTS, ["doc_id"]) if old and sinks else None
    for path in old:
        storage.delete(path)
    if table is not None:
        manifest.write_removed(output, table.column("doc_id").to_pylist(), manifest.REPLACED_IDS)


def make_rates(d: DocbeamOptions, local: bool) -> Rates:
    hardware = d.hardware or ("cpu" if local else None)
    if hardware is None:
        raise UsageError("--hardware is required off this machine (cpu, tpu-v5e, l4, ...): it prices the run")
    try:
        return Rates(PriceTable.load(d.pricing), hardware)
    except PricingError as exc:
        raise UsageError(str(exc)) from exc


@dataclass(frozen=True)
class Budget:
    """--budget-usd, held between waves at the run's hourly rate."""

    usd: float
    rates: Rates

    def spent(self, wall_seconds: float) -> float:
        return wall_seconds * self.rates.usd_per_hour / 3600


@dataclass(frozen=True)
class Launch:
    """One run, resolved before its first wave: everything the later steps read."""

    plan: JobPlan
    options: PipelineOptions
    argv: list[str]
    local: bool  # the job runs in this process (DirectRunner): its platform decides the kernels
    rates: Rates
    attention: dict  # the kernel choice as the manifest and the logs state it

    @property
    def flags(self) -> DocbeamOptions:
        return self.options.view_as(DocbeamOptions)

    @property
    def job_options(self) -> PipelineOptions:
        """The options of the run's Beam jobs: without --sink, whose secrets would otherwise
        travel with the workers' options (Dataflow shows them); the launcher writes the stores.
        A local run with several host processes runs them as Beam's multi-process runner does
        (unless the command line chose a running mode itself)."""
        argv = without_sinks(self.argv) if self.flags.sink else list(self.argv)
        return PipelineOptions(argv)

    @property
    def budget(self) -> Budget | None:
        return None if self.flags.budget_usd is None else Budget(self.flags.budget_usd, self.rates)


@dataclass(frozen=True)
class WavesDone:
    """The committed waves of a run, as their _progress/ records (waves.commit)."""

    records: tuple[dict, ...] = ()

    def plus(self, record: dict) -> "WavesDone":
        return WavesDone((*self.records, record))

    @property
    def wall(self) -> float:
        return sum(r["wall_seconds"] for r in self.records)

    @property
    def merged(self) -> dict:
        return waves.merge_totals([r["totals"] for r in self.records])


def prepare(argv: list[str]) -> Launch:
    """Flags -> a checked plan, staged for remote workers, priced, its kernels chosen."""
    cpu_devices.split()  # before the planner starts JAX; a no-op if something already has
    options = PipelineOptions(argv)
    d = options.view_as(DocbeamOptions)
    plan = make_plan(options)
    local = runners.is_local(options)
    if not local:
        plan = stage_for_workers(plan, options)
    attention = resolve_attention(plan) if local else remote_attention(d.attention)
    if d.sink:  # before anything runs: a store that cannot take the chunks refuses the run (exit 2)
        sink_sync.check(d.sink, plan.vector_format)
    return Launch(plan, options, argv, local, make_rates(d, local=local), attention)


def open_output(launch: Launch) -> WavesDone:
    """--resume: the waves already committed (their leftovers removed); otherwise an output
    that holds no earlier run (or, with --overwrite, no longer does)."""
    output = launch.plan.output
    if not launch.flags.resume:
        prepare_output(output, launch.flags.overwrite, sinks=bool(launch.flags.sink))
        run_folder.mark(output)
        return WavesDone()
    run_folder.check_output(output, overwrite=False, resume=True)
    records = waves.committed(output)
    waves.check_settings(output, records, launch.plan.settings)  # before anything is deleted
    stale = waves.remove_uncommitted(output, records)
    run_folder.mark(output)
    log.info("resume: %d wave(s) committed, %d stale file(s) removed", len(records), len(stale))
    return WavesDone(tuple(records))


def run(argv: list[str], handler=None) -> RunResult:
    """Plan, run (wave by wave) and finalise one job. `handler` replaces the encoder's
    ModelHandler (tests use it)."""
    storage.ensure_emulator_credentials()  # no-op unless STORAGE_EMULATOR_HOST is set
    launch = prepare(argv)
    if launch.local and (n := host_pool.size(launch.plan.host_processes)) > 1:
        log.info("host work: parse and chunk in %d pool processes beside this one, which encodes", n)
        host_pool.warm(n)
    done = open_output(launch)
    if launch.budget is not None and not launch.flags.resume:
        try:  # the budget sample is a Beam run too: Ctrl-C there is the same one line and 130
            with _ctrl_c() as pressed:
                launch = dataclasses.replace(launch, plan=check_budget(launch))
        except (KeyboardInterrupt, RuntimeError) as exc:
            if isinstance(exc, KeyboardInterrupt) or pressed.is_set():
                raise Interrupted(launch.plan.output, 0, 1) from None
            raise
    plan, d = launch.plan, launch.flags
    log.info(
        "%d file(s), %.1f MiB -> %s; model %s; attention %s",
        plan.input_files,
        plan.input_bytes / 2**20,
        plan.output,
        plan.model_name,
        launch.attention["reason"],
    )
    listing = list_files(plan.inputs) if d.resume or d.wave_files else None
    todo = waves.plan(plan.globs, None if listing is None else sorted(listing), d.wave_files, list(done.records))
    display = Display(plan.input_files, plan.input_bytes, interval=PROGRESS_SECONDS) if launch.local else None
    try:
        with display or nullcontext(), _ctrl_c() as pressed:
            done = run_waves(launch, todo, listing, done, handler, pressed)
    except KeyboardInterrupt:
        raise Interrupted(plan.output, len(waves.committed(plan.output)), len(done.records) + len(todo)) from None
    return finalize(launch, done, display.timeline if display else [])


@contextmanager
def _ctrl_c():
    """Ctrl-C raises KeyboardInterrupt as usual and is also remembered (core.interrupt): Beam's
    runner can swallow the exception inside a wave (it then finishes that wave), so the wave
    loop checks the flag too and stops at the next wave at the latest; a Ctrl-C swallowed
    before the run (JAX's import) stops it before the first wave."""
    if threading.current_thread() is not threading.main_thread():
        yield threading.Event()  # signals reach the main thread only
        return
    previous = signal.signal(signal.SIGINT, interrupt.on_sigint)
    try:
        yield interrupt.PRESSED
    finally:
        signal.signal(signal.SIGINT, previous)


def run_waves(
    launch: Launch,
    todo: list[waves.Wave],
    listing: dict[str, tuple[int, str]] | None,
    done: WavesDone,
    handler,
    pressed: threading.Event,
) -> WavesDone:
    """Run and commit each wave in turn; returns every committed wave, the earlier ones included."""
    plan, budget = launch.plan, launch.budget
    for i, wave in enumerate(todo, 1):
        if pressed.is_set():
            raise KeyboardInterrupt
        # A wave of globs (no listing) reads every input file; a listed wave, its own files.
        n_files = plan.input_files if listing is None else len(wave.inputs)
        log.info("wave %d/%d (%s): %d file(s)", i, len(todo), wave.key, n_files)
        # A wave of listed files reads exactly those paths: never matched again as globs,
        # where a name like "a[1].jsonl" would match nothing and be lost.
        files = None if listing is None else [(f, *listing[f]) for f in wave.inputs]
        wave_plan = dataclasses.replace(
            plan,
            files=files,
            file_prefix=wave.key,
            committed_documents=waves.document_files(plan.output, list(done.records)),
        )
        wave_plan = dataclasses.replace(wave_plan, vector_ranges=vector_record.for_wave(wave_plan))
        waves.record_job(plan.output, redact_args(launch.argv), wave, [f for f, *_ in files] if files else None)
        try:
            totals, wall = execute(wave_plan, launch.job_options, handler)
        except Exception:
            # The in-process runner runs DoFns on this thread: Ctrl-C raises KeyboardInterrupt
            # inside one, and Beam re-raises it as `RuntimeError: KeyboardInterrupt [while
            # running 'Encode/...']`. After Ctrl-C any failure of the job is the interruption.
            if pressed.is_set():
                raise KeyboardInterrupt from None
            raise
        inputs_done = [f for f, *_ in files] if files else sorted(list_files(plan.inputs))
        vector_record.keep(wave_plan, wave.key)  # before the commit: a resumed run finds the ranges
        done = done.plus(waves.commit(plan.output, wave, inputs_done, totals, wall, plan.settings))
        if budget and i < len(todo) and budget.spent(done.wall) > budget.usd:
            raise BudgetSpent(
                f"stopped after wave {i} of {len(todo)}: {report.money(budget.spent(done.wall))} spent, over "
                f"--budget-usd {budget.usd}; the waves done are committed: --resume (with a higher --budget-usd) "
                f"continues ({plan.output})"
            )
    return done


def check_budget(launch: Launch) -> JobPlan:
    """Project the whole job's cost from a sample run; refuse to start over budget. The
    sample's outputs stay under the output and the job reuses them (each document is encoded
    once); an input no bigger than the sample is simply run, held to the budget as it goes."""
    plan, d = launch.plan, launch.flags
    sample_out = tables.join(plan.output, tables.BUDGET_SAMPLE)
    est = estimate(
        plan,
        launch.job_options,
        sample_size=d.budget_sample,
        hardware=launch.rates.hardware,
        pricing=d.pricing,
        sample_output=sample_out,
    )
    if est is None:
        log.info("budget check: the input fits the --budget-sample; it runs held to --budget-usd %s", d.budget_usd)
        return plan
    projected = est["projection"]["usd"]
    log.info("budget check: projected %s against --budget-usd %s", report.money(projected), d.budget_usd)
    if projected > d.budget_usd:
        storage.delete_folder(sample_out)
        run_folder.unmark(plan.output)  # nothing ran: leave the output as it was found
        raise BudgetSpent(
            f"projected cost {report.money(projected)} exceeds --budget-usd {d.budget_usd}; not starting.\n"
            + render(est)
        )
    if plan.reuse is not None:  # --reuse of an earlier run wins; the sample is then run twice
        return plan

    def files(table: str) -> list[str]:
        return outputs.files(sample_out, table, tables.SUFFIX[table])

    sample = Reuse(sample_out, files(tables.DOCUMENTS), files(tables.CHUNKS), files(tables.EXTRACTIONS), True, True)
    # int8: the sample's codes are copied as they are, so the run quantises with the sample's ranges
    ranges = vector_record.calibrated(sample_out) if plan.vector_format.dtype == INT8 else None
    return dataclasses.replace(plan, reuse=sample, vector_ranges=ranges)


def _removed(plan: JobPlan) -> list[str]:
    """With --reuse of an earlier run: its documents this input no longer has, written to
    removed/doc_ids.jsonl."""
    reuse = plan.reuse
    if reuse is None or reuse.budget_sample:
        return []
    removed = manifest.removed_since(reuse.output, plan.output)
    manifest.write_removed(plan.output, removed)
    return removed


def _reuse_record(reuse: Reuse, totals: dict, removed: list[str]) -> dict:
    """What --reuse did: reused and encoded documents and tokens, and the removed documents."""
    reused, encoded = totals.get(Stage.REUSE, {}), totals.get(Stage.ASSEMBLE, {})
    return {
        "from": reuse.output,
        "budget_sample": reuse.budget_sample,
        "same_settings": reuse.same_settings,
        "vectors_reused": reuse.reuses_vectors,
        "vectors_converted": reuse.convert_vectors,  # copied full float32 vectors, cut/quantised to this run's format
        "extractors_run_on_reused": list(reuse.run_kinds),
        "documents_reused": int(reused.get("elements_out", 0)),
        "tokens_reused": int(reused.get("tokens", 0)),
        "documents_encoded": int(encoded.get("elements_out", 0)),
        "tokens_encoded": int(encoded.get("tokens", 0)),
        "documents_removed": len(removed),
    }


def _storage_usd(launch: Launch, totals: dict) -> float:
    """Cloud Storage operations: the inputs read, the table files and finalisation's own files
    written (the manifest and the cost report)."""
    plan = launch.plan
    reads = totals.get(Stage.MATCH, {}).get("elements_out", 0) if any(g.startswith("gs://") for g in plan.globs) else 0
    written = len(outputs.existing(plan.output, tables.RUN_FOLDERS)) + 1 + len(report.FILES)
    return launch.rates.gcs_usd(reads, written if plan.output.startswith("gs://") else 0)


def _shown_options(options: dict) -> dict:
    """The options as the manifest records them: sink URIs without their secrets."""
    if options.get("sink"):
        options = {**options, "sink": [redact(u) for u in options["sink"]]}
    return options


def finalize(launch: Launch, done: WavesDone, timeline: list[dict] | None = None) -> RunResult:
    """After the job: read the outputs back, check the accounting, write the manifest and the cost report."""
    plan, totals, wall = launch.plan, done.merged, done.wall
    parse = totals.get(Stage.PARSE, {})
    check = manifest.accounting(plan.output, parse.get("elements_out", 0) + parse.get("rejected", 0))
    removed = _removed(plan)
    sink_records: list[dict] = []
    if launch.flags.sink:
        sink_records, sink_totals = sink_sync.write_all(
            launch.flags.sink,
            plan.output,
            plan.vector_format,
            launch.job_options,
            not plan.no_store_text,
            # the replaced run's documents too (--overwrite): its chunks this run lacks go
            sorted({*removed, *manifest.read_removed(plan.output, manifest.REPLACED_IDS)}),
        )
        totals = {**totals, Stage.SINK: sink_totals}
        wall += sink_totals.get("wall_us", 0) / 1e6  # the stores' write time is part of the run's
    chunks = outputs.read_table(plan.output, tables.CHUNKS, ["doc_id"])
    extr = outputs.read_table(plan.output, tables.EXTRACTIONS, ["kind"])
    langs = outputs.read_table(plan.output, tables.DOCUMENTS, ["language"])
    by_language = model_languages.counts(langs.column("language").to_pylist() if langs is not None else [])
    cost = report.build(
        totals,
        wall_seconds=wall,
        documents=check["ok"],
        rates=launch.rates,
        remote=not launch.local,
        storage_usd=_storage_usd(launch, totals),
        timeline=timeline or [],
        platform=encoder_platform(launch.options, launch.flags.hardware),
    )
    report.write(cost, plan.output)
    import jax

    man = manifest.build(
        plan=plan,
        options=_shown_options(launch.options.get_all_options(drop_default=True)),
        stage_totals=totals,
        check=check,
        attention=launch.attention,
        wall_seconds=wall,
        devices=[str(dv) for dv in jax.local_devices()] if launch.local else [],
        chunk_rows=chunks.num_rows if chunks is not None else 0,
        extraction_rows=extr.num_rows if extr is not None else 0,
        extractions_by_kind=manifest.extraction_kinds(
            extr.column("kind").to_pylist() if extr is not None else [], plan.extractors
        ),
        documents_by_language=by_language,
    )
    model_langs = model_languages.ModelLanguages.of_record(plan.model_languages)
    man["languages"] = {
        "setting": plan.parse.language,  # --language: auto, or the code every document got
        "detector": language_id.identity() if plan.parse.language == language_id.AUTO else None,
        "model": model_langs.record(),
        "warning": model_languages.warning(by_language, model_langs, plan.model_name),
    }
    man["cost"] = {
        "usd": cost["totals"]["cost_usd"],
        "usd_per_1m_document_tokens": cost["totals"]["usd_per_1m_document_tokens"],
        "usd_per_1k_documents": cost["totals"]["usd_per_1k_documents"],
        "hardware": launch.rates.hardware,
        "report": "_cost/report.md",
    }
    if plan.reuse is not None:
        man["reuse"] = _reuse_record(plan.reuse, totals, removed)
    man["vectors"] = vector_record.record(plan)
    man["storage_retries"] = storage.retry_count()
    man["run_id"] = run_folder.run_id(plan.output)
    d = launch.flags
    if d.sink:
        man["sinks"] = sink_records
    man["verdict"] = manifest.verdict(check, d.max_rejected, cost["totals"]["cost_usd"], d.budget_usd, sink_records)
    if plan.reuse is not None and plan.reuse.budget_sample:  # copied into this run: no longer needed
        storage.delete_folder(tables.join(plan.output, tables.BUDGET_SAMPLE))
    storage.write_text(tables.join(plan.output, tables.MANIFEST), json.dumps(man, indent=2, default=str))
    if not check["holds"]:
        log.error("accounting check FAILED: %s", json.dumps(man["accounting"]))
    return RunResult(man, totals, wall, cost)
