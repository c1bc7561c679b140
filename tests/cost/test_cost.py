"""Cost metering: metrics add up, dollars follow the price table, reports render, leaks are seen."""

import json

import numpy as np
import pytest

from docbeam.pipeline import cli
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.hardware import catalogue
from docbeam.pipeline.cost.memwatch import MemWatch
from docbeam.pipeline.cost.pricing import PriceTable, PricingError, Rates
from docbeam.pipeline.encode.handler import EncoderHandler
from docbeam.pipeline.encode.packing import PackSpec, default_rows
from docbeam.pipeline.io import storage
from docbeam.pipeline.launch.running.job import BudgetSpent
from tests.helpers import SAMPLES, run_job, table

TABLE = PriceTable.load()


def test_metrics_add_up(sample_run):
    out, res = sample_run
    t, m = res.stage_totals, res.manifest
    assert t["match"]["elements_out"] == m["inputs"]["files_matched"] == 6
    assert t["parse"]["elements_out"] + t["parse"]["rejected"] == m["counts"]["read"]
    assert t["assemble"]["elements_out"] == m["counts"]["ok"]
    assert t["chunk"]["elements_out"] == t["pack"]["elements_in"] == t["encode"]["elements_in"] == m["counts"]["chunks"]
    assert t["pack"]["tokens"] == t["encode"]["tokens"]
    # The encoder's padding is the packer's plus whole empty rows that even a batch out over the
    # devices (a tail batch of one row on the suite's two CPU devices).
    extra_padding = t["encode"]["pad_tokens"] - t["pack"]["pad_tokens"]
    assert extra_padding >= 0 and extra_padding % 64 == 0
    written = m["counts"]["ok"] + m["counts"]["chunks"] + m["counts"]["extractions"] + m["counts"]["rejected"]
    assert t["write"]["elements_in"] == written
    # At most one compilation per batch shape the packer can emit; 0 when an earlier test in
    # this process already compiled them (the runtime is shared).
    spec = PackSpec(rows=default_rows(256), seq_len=256)
    shapes = sum(len(spec.shapes_for(n)) for n in spec.lengths)
    assert t["encode"].get("compilations", 0) <= shapes == 8 and t["encode"]["device_us"] > 0
    assert all(t[s]["peak_rss_bytes"] > 0 for s in ("parse", "chunk", "encode"))


def test_costs_follow_the_price_table(sample_run):
    _, res = sample_run
    r = res.cost
    rates = Rates(TABLE, "cpu")
    hourly = (
        rates.worker.vcpus * TABLE.prices["dataflow_batch_vcpu_hour"]["usd"]
        + rates.worker.memory_gb * TABLE.prices["dataflow_batch_memory_gb_hour"]["usd"]
    )
    assert r["hardware"]["usd_per_hour"] == pytest.approx(hourly)
    assert r["totals"]["compute_usd"] == pytest.approx(r["billed_seconds"] * hourly / 3600)
    assert sum(s["cost_usd"] for s in r["stages"]) == pytest.approx(r["totals"]["compute_usd"])
    assert sum(s["share"] for s in r["stages"]) == pytest.approx(1.0)
    t = r["totals"]
    assert t["usd_per_1m_document_tokens"] == pytest.approx(t["cost_usd"] / t["document_tokens"] * 1e6)
    assert t["usd_per_1m_encoder_tokens"] == pytest.approx(t["cost_usd"] / t["encoder_tokens"] * 1e6)
    assert t["document_tokens"] == sum(d["n_tokens"] for d in table(sample_run[0], "documents").to_pylist())
    assert t["encoder_tokens"] > t["document_tokens"]  # plus special tokens and overlaps
    assert r["totals"]["usd_per_1k_documents"] == pytest.approx(r["totals"]["cost_usd"] / 69 * 1e3)
    assert res.manifest["cost"]["usd"] == pytest.approx(r["totals"]["cost_usd"])


def test_tpu_is_billed_per_chip_hour_only_and_gpu_with_its_host():
    tpu = Rates(TABLE, "tpu-v5e:4")
    assert tpu.usd_per_hour == pytest.approx(4 * TABLE.prices["dataflow_tpu_v5e_chip_hour"]["usd"])
    assert [e["id"] for e, _ in tpu.lines] == ["dataflow_tpu_v5e_chip_hour"]
    l4 = Rates(TABLE, "l4")
    host = (
        4 * TABLE.prices["dataflow_batch_vcpu_hour"]["usd"] + 16 * TABLE.prices["dataflow_batch_memory_gb_hour"]["usd"]
    )
    assert l4.usd_per_hour == pytest.approx(TABLE.prices["dataflow_gpu_l4_hour"]["usd"] + host)
    with pytest.raises(PricingError, match="known: cpu, .*tpu-v5e"):
        Rates(TABLE, "abacus")
    with pytest.raises(PricingError, match="l4 workers come with \\[1, 2, 4, 8\\] GPUs, not 3"):
        Rates(TABLE, "l4:3")


def test_bad_price_table_is_refused_before_the_job(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("schema_version: 1\nprices: {x: {unit: vcpu_hour}}\n")
    with pytest.raises(UsageError, match="needs a unit and a non-negative usd"):
        run_job(SAMPLES / "notes.txt", tmp_path / "out", "--pricing", str(bad))
    assert not (tmp_path / "out").exists()


def test_report_renders_and_rerenders(sample_run, capsys):
    out, res = sample_run
    md = (out / "_cost" / "report.md").read_text()
    for stage in ("parse", "chunk", "pack", "encode", "assemble", "write", "other"):
        assert f"| {stage} |" in md
    assert "per 1M document tokens" in md and "per 1k documents" in md and "dataflow_batch_vcpu_hour" in md
    assert "| parse | 6 files | 69 documents |" in md  # units named, per stage
    assert "`other` is time no stage metered" in md and "`device s` is the time the encoder waited" in md
    assert res.cost["timeline"] and res.cost["timeline"][-1]["documents"] == 69
    png = out / "_cost" / "stages.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (out / "_cost" / "report.md").unlink()
    png.unlink()
    assert cli.main(["report", str(out)]) == 0
    assert (out / "_cost" / "report.md").read_text() == md and png.exists()
    assert "| encode |" in capsys.readouterr().out
    assert cli.main(["report", str(out / "nope")]) == 2


def test_chart_title_keeps_its_dollars_and_the_labels_do_not_overlap(sample_run):
    import matplotlib.pyplot as plt

    from docbeam.pipeline.cost import report

    _, res = sample_run
    fig = report.figure(res.cost)
    title = fig._suptitle
    assert title.get_text().startswith("docbeam: $") and "per 1M document tokens" in title.get_text()
    assert not title._preprocess_math(title.get_text())[1], "the title must not be read as mathtext"
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t.get_window_extent(renderer) for ax in fig.axes for t in ax.get_yticklabels() if t.get_text()]
    assert all(not a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1 :])
    throughput = fig.axes[0].lines[0].get_ydata()
    assert len(throughput) == len(res.cost["timeline"]) and max(throughput) > 0  # the run's own curve
    plt.close(fig)


def test_the_report_says_how_busy_an_accelerator_was_and_warns_when_mostly_idle():
    from docbeam.pipeline.cost import report

    totals = {"encode": {"wall_us": 9e6, "device_us": 3e6, "tokens": 1000}, "ner_encode": {"device_us": 1e6}}
    rates = Rates(PriceTable.load(None), "tpu-v5e:4")
    kw = {"wall_seconds": 10.0, "documents": 5, "rates": rates, "remote": True, "storage_usd": 0.0}
    idle = report.build(totals, platform="tpu", **kw)
    assert idle["device"] == {"platform": "tpu", "seconds": 4.0, "busy_fraction": 0.4, "warning": True}
    assert "WARNING:   TPU busy 40% of the run (4.0 device s): below 50%" in report.summary_line(idle)
    assert "**WARNING: TPU busy 40%" in report.render_markdown(idle)
    # the run's own row of estimate --compare's table closes the report
    assert report.render_markdown(idle).rstrip().endswith("| tpu-v5e:4 | 10.0 s | $0.012 | - | host |")
    busy = report.build({**totals, "encode": {**totals["encode"], "device_us": 8e6}}, platform="tpu", **kw)
    assert not busy["device"]["warning"] and "device:    TPU busy 90%" in report.summary_line(busy)
    on_cpu = report.build(totals, platform="cpu", **kw)  # the encoder shares the CPU with the host: no warning
    assert not on_cpu["device"]["warning"] and "busy" not in report.summary_line(on_cpu)


def test_money_keeps_meaningful_digits():
    from docbeam.pipeline.cost.report import money

    assert [money(x) for x in (12.345, 0.5, 0.0123, 0.00001234, 0)] == ["$12.35", "$0.50", "$0.012", "$0.000012", "$0"]


def test_memwatch_fires_on_a_ramp_not_on_a_step_or_noise():
    mib = 2**20
    ramp = MemWatch("t", threshold_bytes=64 * mib)
    fired = [ramp.sample(1000 * mib + i * 8 * mib) for i in range(40)]
    assert fired.count(True) == 1 and ramp.growth > 64 * mib
    step = MemWatch("t", threshold_bytes=64 * mib)  # a new executable compiled, then flat
    assert not any(step.sample((1000 + (200 if i > 10 else 0)) * mib) for i in range(40))
    noise = MemWatch("t", threshold_bytes=64 * mib)
    rng = np.random.default_rng(0)
    assert not any(noise.sample(int((1000 + rng.normal(0, 20)) * mib)) for _ in range(200))


class LeakyHandler(EncoderHandler):
    """A deliberately leaking encoder stage: keeps 4 MiB per batch forever."""

    def run_inference(self, batch, model, inference_args=None):
        self.__dict__.setdefault("_hoard", []).append(np.ones(1 << 20, np.float32))
        return super().run_inference(batch, model, inference_args)


@pytest.mark.slow
@pytest.mark.parametrize("leaky", [True, False])
def test_leak_detector_in_a_real_run(tmp_path, leaky, caplog):
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.launch.planning.planner import make_plan
    from docbeam.pipeline.launch.running.job import run

    argv = [
        "--input",
        str(SAMPLES / "articles.jsonl"),
        "--output",
        str(tmp_path / "out"),
        "--batch-rows",
        "1",
        "--leak-threshold-mb",
        "96",
    ]
    handler = LeakyHandler(make_plan(PipelineOptions(argv)).encoder) if leaky else None
    res = run(argv, handler=handler)
    report = json.loads(storage.read_text(f"{tmp_path}/out/_cost/report.json"))
    if leaky:
        assert report["memory"]["leak_warnings"] == 1 and report["memory"]["encoder_rss_growth_bytes"] > 96 << 20
        assert "LEAK WARNING" in (tmp_path / "out" / "_cost" / "report.md").read_text()
        assert "memory keeps growing" in caplog.text
    else:
        assert report["memory"]["leak_warnings"] == 0
    assert res.manifest["accounting"]["holds"]
    assert table(tmp_path / "out", "documents").num_rows == 40


def _estimate(globs: list[str], flags: list[str], **kw) -> dict:
    """`docbeam estimate` as the CLI runs it: flags -> plan -> estimate."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.launch.commands.estimate import estimate
    from docbeam.pipeline.launch.planning.planner import make_plan

    options = PipelineOptions(["--input", *globs, *flags])
    return estimate(make_plan(options, needs_output=False), options, pricing=None, **kw)


@pytest.mark.slow
def test_estimate_counts_documents_and_labels_assumptions(capsys):
    from docbeam.pipeline.launch.commands.estimate import render

    est = _estimate([str(SAMPLES / "*")], [], sample_size=20, hardware="l4")
    assert est["input"]["documents_estimated"] == 71
    assert est["sample"]["documents"] == 20 and est["sample"]["document_tokens_per_document"] > 50
    p = est["projection"]
    assert p["throughput_basis"].startswith("ASSUMED") and "assumed prices" in p["price_basis"]
    assert p["usd"] == pytest.approx(p["hours"] * p["usd_per_hour"])
    # An L4 worker's 4 vCPUs: its host rate beside the chips', the lower one projected and named.
    host = catalogue().host.of_worker(4)[0]
    assert p["host"]["document_tokens_per_second"] == host and p["host"]["basis"].startswith("MEASURED on")
    assert p["document_tokens_per_second"] == min(host, p["chips"]["document_tokens_per_second"])
    assert p["binding"] == ("host" if host < p["chips"]["document_tokens_per_second"] else "chips")
    assert p["usd_per_1m_document_tokens"] == pytest.approx(
        p["usd_per_hour"] / 3600 / p["document_tokens_per_second"] * 1e6
    )
    assert f"binds: the {p['binding']}" in render(est)
    here = _estimate([str(SAMPLES / "*")], [], sample_size=20, hardware="cpu")
    assert here["projection"]["throughput_basis"].startswith("measured here")
    assert here["projection"]["binding"] == "measured end to end" and "binds:" not in render(here)


@pytest.mark.slow
def test_estimate_states_its_basis_in_document_tokens(tmp_path):
    """`docbeam estimate` says which documents it sampled and how they were picked, the spread
    of their tokens, and what a token is: document tokens, with or without --extract (the
    encoder's extra work with extractions is its own, labelled figure)."""
    import statistics

    from docbeam.pipeline.launch.commands.estimate import render

    files = [SAMPLES / "articles.jsonl", SAMPLES / "guide.md", SAMPLES / "notes.txt"]
    plain = _estimate([str(f) for f in files], [], sample_size=12, hardware="l4")
    extracting = _estimate([str(f) for f in files], ["--extract", "keyphrases"], sample_size=12, hardware="l4")
    s, sx = plain["sample"], extracting["sample"]
    assert s["doc_ids"] == sx["doc_ids"] and len(s["doc_ids"]) == s["documents"] == 12
    assert s["files"] == {"articles.jsonl": 10, "guide.md": 1, "notes.txt": 1}  # a few from every file
    assert s["document_tokens_per_document"] == sx["document_tokens_per_document"]  # one meaning
    assert sx["encoder_tokens_per_document_token"] > 1.25 * s["encoder_tokens_per_document_token"] > 1.25
    spread = s["document_tokens_spread"]
    assert spread["min"] <= spread["median"] <= spread["max"] and spread["median"] == statistics.median(spread["all"])
    assert s["document_tokens_per_document"] == pytest.approx(statistics.mean(spread["all"]))
    text = render(extracting)
    assert "12 documents drawn across files in proportion to their bytes (seed 0)" in text
    assert "articles.jsonl: 10" in text and "scaled by bytes per kind of file" in text
    assert f"{s['doc_ids'][0]} ... {s['doc_ids'][-1]}" in text  # which documents: the first and last ids
    assert f"median {spread['median']:,.0f}" in text and f"max {spread['max']:,}" in text
    assert "tokens each" not in text and " tokens/s" not in text.replace("document tokens/s", "").replace(
        "encoder tokens/s", ""
    )  # every token figure says which tokens it counts


@pytest.mark.slow
def test_a_tpu_estimate_uses_the_compiled_roofline(tmp_path):
    """With libtpu here, a TPU projection is the roofline of this run's encoder compiled for the
    worker's chips, times the catalogue's assumed efficiency, and says so."""
    pytest.importorskip("libtpu")
    from docbeam.pipeline.core.hardware import catalogue
    from tests.model.tiny import write_tiny_bert

    tiny = write_tiny_bert(tmp_path / "tiny")
    est = _estimate([str(SAMPLES / "*.txt")], ["--model", str(tiny)], sample_size=5, hardware="tpu-v5e:4")
    p, s = est["projection"], est["sample"]
    assert p["throughput_basis"].startswith("COMPILED ROOFLINE x ASSUMED EFFICIENCY"), p["throughput_basis"]
    bound = float(p["throughput_basis"].split(": ")[1].split(" tokens/s")[0].replace(",", ""))
    chips = p["chips"]["document_tokens_per_second"] * s["encoder_tokens_per_document_token"]
    assert chips == pytest.approx(bound * catalogue().assumed_roofline_efficiency * 4, rel=1e-3)


@pytest.mark.slow
def test_estimate_reads_the_sample_with_the_job_field_names(tmp_path):
    from tests.helpers import write_jsonl

    src = write_jsonl(tmp_path / "d.jsonl", [{"key": f"k{i}", "body": f"document number {i} " * 20} for i in range(12)])
    est = _estimate([str(src)], ["--id-field", "key", "--text-field", "body"], sample_size=5, hardware="cpu")
    assert est["sample"]["documents"] == 5 and est["input"]["documents_estimated"] == 12


@pytest.mark.slow
def test_budget_refuses_before_starting(tmp_path):
    with pytest.raises(BudgetSpent, match=r"projected cost \$0\.0+[1-9]\d exceeds --budget-usd 1e-07"):
        run_job(SAMPLES / "*", tmp_path / "out", "--budget-usd", "0.0000001", "--budget-sample", "20")
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]  # nothing left behind


@pytest.mark.slow
def test_budget_check_reuses_its_sample_instead_of_running_it_twice(tmp_path):
    from tests.helpers import write_jsonl

    docs = [{"id": f"d{i}", "text": f"Document {i} talks about packing rows. " * (5 + i)} for i in range(12)]
    src = write_jsonl(tmp_path / "in.jsonl", docs)
    res = run_job(src, tmp_path / "out", "--budget-usd", "100", "--budget-sample", "5")
    r = res.manifest["reuse"]
    assert r["budget_sample"] and (r["documents_reused"], r["documents_encoded"]) == (5, 7)
    fresh = run_job(src, tmp_path / "fresh")
    sample_ids = {f"d{i}" for i in range(5)}
    chunks = table(tmp_path / "fresh", "chunks").to_pylist()
    assert res.stage_totals["encode"]["tokens"] == sum(c["n_tokens"] for c in chunks if c["doc_id"] not in sample_ids)
    assert fresh.stage_totals["encode"]["tokens"] == sum(c["n_tokens"] for c in chunks)
    assert res.manifest["counts"]["ok"] == 12 and not (tmp_path / "out" / "_budget_sample").exists()


@pytest.mark.slow
def test_an_input_within_the_sample_is_run_and_held_to_the_budget(tmp_path, capsys):
    from docbeam.pipeline.run import main
    from tests.helpers import write_jsonl

    src = write_jsonl(tmp_path / "in.jsonl", [{"id": i, "text": f"small document {i}"} for i in range(4)])
    assert main(["--input", str(src), "--output", str(tmp_path / "out"), "--budget-usd", "1e-9"]) == 3
    assert "over --budget-usd 1e-09" in capsys.readouterr().err
    assert "reuse" not in json.loads((tmp_path / "out" / "_manifest.json").read_text())  # no sample was run


def test_metered_counts_elements_and_bills_only_the_stages_own_time():
    """@metered: elements in (a batch's length) and out (main outputs; errors/ as rejected),
    bytes, and the CPU time of producing the outputs: not the time a consumer (a fused
    downstream stage) takes with each, nor that of a stage timed inside (an extractor)."""
    import time

    from apache_beam.pvalue import TaggedOutput

    from docbeam.pipeline.core.tables import ERRORS
    from docbeam.pipeline.cost.metering import StageMeter, metered

    def burn(seconds: float) -> None:
        t0 = time.process_time()
        while time.process_time() - t0 < seconds:
            pass

    totals: dict[str, dict[str, float]] = {}

    class Recorded(StageMeter):
        def add(self, **values: float) -> None:
            super().add(**values)
            for name, value in values.items():
                totals.setdefault(self.stage, {}).setdefault(name, 0)
                totals[self.stage][name] += value

    class Stage:
        meter, inner = Recorded("test_outer"), Recorded("test_inner")

        @metered(inputs="batch", bytes_in=len, bytes_out=len)
        def process(self, words: list[str]):
            for w in words:
                burn(0.01)  # the stage's own work: 10 ms per output
                self.inner.counted(lambda w=w: burn(0.1) or [w], inputs=1)  # 100 ms billed to `inner`
                yield TaggedOutput(ERRORS, w) if w == "bad" else w

    outs = []
    for out in Stage().process(["a", "bb", "bad", "cccc"]):
        burn(0.1)  # downstream work: 100 ms per output, not the stage's
        outs.append(out)
    assert len(outs) == 4
    t, inner = totals["test_outer"], totals["test_inner"]
    assert (t["elements_in"], t["bytes_in"]) == (4, 1 + 2 + 3 + 4)
    assert (t["elements_out"], t["bytes_out"], t["rejected"]) == (3, 1 + 2 + 4, 1)
    assert 0.04e6 <= t["cpu_us"] < 0.2e6, t  # 4 x 10 ms; the inner and downstream 800 ms left out
    assert t["wall_us"] < 0.3e6, t
    assert (inner["elements_in"], inner["elements_out"]) == (4, 4) and inner["cpu_us"] >= 0.4e6


def test_metered_counts_the_items_of_list_outputs():
    """A stage that emits its outputs in lists (chunk: segments) counts their items out."""
    from apache_beam.pvalue import TaggedOutput

    from docbeam.pipeline.core.tables import ERRORS
    from docbeam.pipeline.cost.metering import StageMeter, metered

    totals: dict[str, float] = {}

    class Recorded(StageMeter):
        def add(self, **values: float) -> None:
            for name, value in values.items():
                totals[name] = totals.get(name, 0) + value

    class Stage:
        meter = Recorded("test_lists")

        @metered(inputs="batch", items_out=len)
        def process(self, docs: list[str]):
            for d in docs:
                yield TaggedOutput(ERRORS, d) if d == "bad" else list(d)

    assert len(list(Stage().process(["ab", "bad", "cde", ""]))) == 4
    assert (totals["elements_in"], totals["elements_out"], totals["rejected"]) == (4, 2 + 3 + 0, 1)


@pytest.mark.slow
def test_the_estimate_sample_draws_from_every_format_and_the_same_on_a_rerun(tmp_path):
    """Thirty JSONL shards named before two PDFs and a page: the first documents in path order
    were all JSONL; the draw takes every format, the same on a rerun, and projects the
    document tokens of the whole input from bytes per kind of file."""
    from docbeam.pipeline.launch.commands.estimate import draw_order, take_sample
    from docbeam.pipeline.launch.planning.planner import list_files
    from tests.corpus import build_corpus
    from tests.helpers import write_jsonl
    from tests.ingest import files

    src = tmp_path / "in"
    src.mkdir()
    docs = build_corpus(300, seed=5, min_words=20, max_words=60)
    for i in range(30):
        write_jsonl(src / f"a-{i:02d}.jsonl", docs[i * 10 : (i + 1) * 10])
    for i in (1, 2):
        (src / f"z-{i}.pdf").write_bytes(files.report_pdf(paragraphs=6).data)
    (src / "m-page.html").write_text(files.news_page(paragraphs=6))
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.ingest.parse import ParseConfig
    from docbeam.pipeline.launch.planning.planner import make_plan

    plan = make_plan(PipelineOptions(["--input", str(src)]), needs_output=False)
    listing = sorted((p, size, name) for p, (size, name) in list_files(plan.inputs).items())
    first, again = (take_sample(listing, 20, ParseConfig()) for _ in range(2))
    assert [d.doc_id for d in first.docs] == [d.doc_id for d in again.docs]  # seeded: the same draw
    kinds = {first.kind_of[d.source] for d in first.docs}
    assert kinds == {"jsonl", "pdf", "html"}, kinds
    assert draw_order(listing, 0) != draw_order(listing, 1)  # another seed, another draw
    est = _estimate([str(src)], [], sample_size=20, hardware="cpu")
    actual = run_job(src, tmp_path / "out").cost["totals"]["document_tokens"]
    assert est["projection"]["document_tokens"] == pytest.approx(actual, rel=0.15)


@pytest.mark.slow
def test_compare_prices_the_input_on_every_hardware_kind_and_says_from_what_size_each_pays(tmp_path):
    """`docbeam estimate --compare`: the CPU measured here, then each accelerator Dataflow offers
    at its smallest worker, each with its time, dollars, $/1M document tokens, what binds, and
    the input size above which it costs less than the CPU (its start-up paid once)."""
    from docbeam.pipeline.core.hardware import catalogue
    from docbeam.pipeline.launch.commands.estimate import STARTUP_S, render
    from tests.model.tiny import write_tiny_bert

    tiny = write_tiny_bert(tmp_path / "tiny")
    est = _estimate([str(SAMPLES / "*.txt")], ["--model", str(tiny)], sample_size=5, hardware="cpu", compare=True)
    rows = est["compare"]
    want = ["cpu", *(f"{a}:{min(catalogue().get(a).workers)}" for a in catalogue().on_dataflow())]
    assert [r["hardware"] for r in rows] == want
    cpu = rows[0]
    assert cpu["binds"] == "measured" and cpu["cheaper_than_cpu_above_document_tokens"] is None
    again = _estimate([str(SAMPLES / "*.txt")], ["--model", str(tiny)], sample_size=5, hardware="l4", compare=True)
    named = [r["hardware"] for r in again["compare"]]
    assert named[0] == "l4" and "l4:1" not in named and len(named) == len(rows)  # `l4` is `l4:1`: one row
    for r in rows[1:]:
        assert r["seconds"] >= STARTUP_S and r["binds"] == "start-up"  # a sample-sized input: start-up is most
        start_usd = r["usd"] - r["usd_per_1m_document_tokens"] / 1e6 * est["projection"]["document_tokens"]
        if r["never_cheaper"]:
            assert r["usd_per_1m_document_tokens"] >= cpu["usd_per_1m_document_tokens"]
        else:
            above = r["cheaper_than_cpu_above_document_tokens"]
            gain = (cpu["usd_per_1m_document_tokens"] - r["usd_per_1m_document_tokens"]) / 1e6
            assert above == pytest.approx(start_usd / gain, rel=1e-6)
    text = render(est)
    assert "compare, for this input" in text and "start-up: 5 min, ASSUMED" not in text  # cpu: no start-up
    assert all(r["hardware"] in text for r in rows)
