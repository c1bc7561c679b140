"""Run one Beam job over a plan and collect its docbeam metrics."""

import time

import apache_beam as beam
from apache_beam.metrics.metric import MetricsFilter
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.pipeline.cost.metering import NAMESPACE
from docbeam.pipeline.encode.runtime import finish_profiles
from docbeam.pipeline.graph import build as graph
from docbeam.pipeline.graph import runners, store_write
from docbeam.pipeline.graph.job_plan import JobPlan


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


def execute(plan: JobPlan, options: PipelineOptions, handler=None) -> tuple[dict, float]:
    """One Beam job over `plan`; returns its stage metrics and wall seconds.
    `handler` replaces the encoder's ModelHandler (tests use it)."""
    t0 = time.perf_counter()
    p = beam.Pipeline(runner=runners.resolve(options), options=options)
    graph.build(p, plan, handler)
    result = p.run()
    result.wait_until_finish()
    finish_profiles()
    return stage_totals(result), time.perf_counter() - t0


def execute_store_write(
    chunk_files: list[str],
    document_files: list[str],
    write_config,
    store_text: bool,
    options: PipelineOptions,
    fit=None,
) -> tuple[dict, float]:
    """The --sink job for one store (graph.store_write); returns its stage metrics and wall seconds."""
    t0 = time.perf_counter()
    p = beam.Pipeline(runner=runners.resolve(options), options=options)
    store_write.build(p, chunk_files, document_files, write_config, store_text, fit)
    result = p.run()
    result.wait_until_finish()
    return stage_totals(result), time.perf_counter() - t0
