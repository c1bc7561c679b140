"""`docbeam estimate`: run a sample, project time and cost for the whole input.

1. List the inputs; read documents in path order until the sample has N of them, noting
   how much of each file that took.
2. Estimate the documents in the whole input: exact for files read to the end (and for
   Parquet, from its metadata), else scaled by bytes from what was read.
3. Run the real job on the sample here, with the same flags: tokens per document,
   tokens per second, padding.
4. Project tokens, hours and dollars on the chosen hardware: the throughput measured here
   when the hardware is this machine (cpu), a measured figure from hardware.yaml when one
   is recorded, else for a TPU the roofline of the run's encoder compiled for its chips here
   (libtpu; `docbeam compile`) x an assumed efficiency, else an assumption (peak FLOPs x
   assumed MFU); each printed as what it is. On an accelerator worker the host work (parse,
   chunk, pack, assemble, write) has a rate of its own (hardware.yaml's host rates for the
   worker's vCPUs): the projection runs at the lower of the two and names which binds.
"""

import dataclasses
import json
import random
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.model import EncoderConfig, flops_per_token
from docbeam.pipeline.core import tables
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.hardware import catalogue, parse_spec, worker_for
from docbeam.pipeline.core.records import Document, Skipped
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost.pricing import PriceTable, Rates
from docbeam.pipeline.graph.job_plan import JobPlan
from docbeam.pipeline.ingest.parse import ParseConfig, format_of, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox
from docbeam.pipeline.ingest.sources import for_glob, left_out
from docbeam.pipeline.io import outputs, storage
from docbeam.pipeline.launch.planning.planner import list_files
from docbeam.pipeline.launch.running.execute import execute


class _Counting:
    """A file object that counts the raw bytes read from it."""

    def __init__(self, f):
        self.f, self.read_bytes = f, 0

    def read(self, n=-1):
        data = self.f.read(n)
        self.read_bytes += len(data)
        return data

    def readinto(self, b):
        n = self.f.readinto(b)
        self.read_bytes += n or 0
        return n

    def __getattr__(self, name):
        return getattr(self.f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()


@dataclass
class Sample:
    docs: list[Document]
    rejected: int
    total_docs_estimate: float
    files: int
    bytes_total: int
    # How many of the sampled documents each file gave, by its name (draw order): the basis printed.
    taken: dict[str, int] = dataclasses.field(default_factory=dict)
    # Per sampled file (by path): its kind (format, .gz apart), the input bytes its sampled
    # records stand for, and the input's bytes per kind: the projection scales by these.
    kind_of: dict[str, str] = dataclasses.field(default_factory=dict)
    bytes_of: dict[str, float] = dataclasses.field(default_factory=dict)
    bytes_by_kind: dict[str, int] = dataclasses.field(default_factory=dict)
    seed: int = 0

    @property
    def complete(self) -> bool:
        """The sample is the whole input: every file was read to its end."""
        return len(self.docs) + self.rejected == self.total_docs_estimate


def _parquet_rows(path: str) -> int:
    import pyarrow.parquet as pq

    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return pq.ParquetFile(f).metadata.num_rows


# Formats with many records per file: counted by parsing up to a byte budget, then extrapolated.
STREAMED = ("jsonl", "csv", "warc")


def _kind(path: str) -> str:
    # Records per on-disk byte differ between plain and compressed JSONL: keep them apart.
    return f"{format_of(path)}{'.gz' if path.lower().endswith('.gz') else ''}"


def draw_order(files: list[tuple[str, int, str]], seed: int) -> list[tuple[str, int, str]]:
    """The files in a seeded random order where a file's chance to come early is in proportion to
    its bytes (Efraimidis-Spirakis keys u^(1/bytes)), the first drawn of each kind of file ahead
    of the rest, so every format present is sampled: a rerun draws the same order."""
    rng = random.Random(seed)
    keyed = [(rng.random() ** (1 / size) if size > 0 else 0.0, path, size, name) for path, size, name in files]
    drawn = [(p, size, name) for _, p, size, name in sorted(keyed, key=lambda k: (-k[0], k[1]))]
    firsts: dict[str, tuple[str, int, str]] = {}
    for f in drawn:
        firsts.setdefault(_kind(f[0]), f)
    return [*firsts.values(), *(f for f in drawn if f not in firsts.values())]


def take_sample(
    files: list[tuple[str, int, str]], n: int, cfg: ParseConfig, count_budget: int = 256 << 20, seed: int = 0
) -> Sample:
    """About n documents drawn across files and formats in proportion to their bytes: files in
    `draw_order`, a few records from each (a file of records gives its first n / files, at
    least one), so a folder of many files is sampled across them rather than from its first.
    The records the input holds are counted exactly (parse only) for the first `count_budget`
    bytes of files, Parquet from its metadata, the rest extrapolated from records per byte of
    the same kind of file."""
    docs: list[Document] = []
    rejected, counted, spent = 0, 0.0, 0
    density: dict[str, list[tuple[int, float]]] = {}  # kind -> [(records, bytes)]
    pending: list[tuple[str, int]] = []
    taken: dict[str, int] = {}
    # records per file of records: what the files of one document each leave of n, shared out
    singles = sum(1 for path, _, _ in files if format_of(path) not in (*STREAMED, "parquet"))
    quota = max(1, -(-(n - min(singles, n)) // max(len(files) - singles, 1)))
    bytes_of: dict[str, float] = {}
    with Sandbox(cfg.parse_timeout_s, cfg.parse_memory_mb) as sandbox:  # PDF, Word, HTML parse in it
        for path, size, name in draw_order(files, seed):
            if left_out(path, name, cfg.follow_links):
                continue  # skipped unread, as the job skips it: a FIFO named .parquet would hang here
            fmt = format_of(path)
            whole_file = 1.0
            if fmt == "parquet":
                whole_file = _parquet_rows(path)
                counted += whole_file
            elif fmt not in STREAMED:
                counted += 1  # one document, or one rejection, per file
            if len(docs) >= n and (fmt not in STREAMED or spent >= count_budget):
                if fmt in STREAMED:
                    pending.append((path, size))
                continue
            holder: dict[str, _Counting] = {}

            def open_file(path=path, holder=holder):
                holder["f"] = _Counting(FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED))
                return holder["f"]

            records, mine, got = 0, 0, 0  # records read; sampled (documents and rejections); documents
            for rec in parse_file(path, open_file, cfg, name, sandbox):
                if isinstance(rec, Skipped):
                    continue  # not a document, not an error: costs nothing downstream
                records += 1
                if len(docs) < n and got < quota:
                    mine += 1
                    if isinstance(rec, Document):
                        docs.append(rec)
                        got += 1
                        taken[name] = taken.get(name, 0) + 1
                    else:
                        rejected += 1
                elif fmt not in STREAMED or spent + holder["f"].read_bytes > count_budget:
                    break
            read = holder["f"].read_bytes if "f" in holder else size
            spent += read
            if fmt in STREAMED:
                whole = read >= size
                whole_file = records if whole else records * size / max(read, 1)
                counted += whole_file
                density.setdefault(_kind(path), []).append((records, min(read, size)))
            if mine:  # the bytes the sampled records stand for: their share of the file's records
                bytes_of[path] = size * mine / max(whole_file, mine)
    for path, size in pending:
        seen = density.get(_kind(path)) or [r for rs in density.values() for r in rs]
        per_byte = sum(r for r, _ in seen) / max(sum(b for _, b in seen), 1)
        counted += size * per_byte
    by_kind: dict[str, int] = {}
    for path, size, _ in files:
        by_kind[_kind(path)] = by_kind.get(_kind(path), 0) + size
    return Sample(
        docs,
        rejected,
        counted,
        len(files),
        sum(s for _, s, _ in files),
        taken,
        kind_of={p: _kind(p) for p in bytes_of},
        bytes_of=bytes_of,
        bytes_by_kind=by_kind,
        seed=seed,
    )


def projected_tokens(sample: Sample, tokens_by_file: dict[str, int], rounds: int = 200) -> tuple[float, float, float]:
    """Document tokens of the whole input, scaled by bytes per kind of file: each kind's sampled
    tokens per byte its sampled records stand for, times the input's bytes of that kind (a kind
    the sample missed takes the rate of all). With an interval (10th-90th percentile) from
    resampling the sampled files (seeded): the spread between files."""

    def rate(files: list[str]) -> float:
        return sum(tokens_by_file.get(f, 0) for f in files) / max(sum(sample.bytes_of[f] for f in files), 1)

    by_kind = {k: sorted(f for f in sample.bytes_of if sample.kind_of[f] == k) for k in sample.bytes_by_kind}
    rate_all = rate(sorted(sample.bytes_of))

    def total(drawn: dict[str, list[str]]) -> float:
        return sum((rate(drawn[k]) if drawn[k] else rate_all) * size for k, size in sample.bytes_by_kind.items())

    rng = random.Random(sample.seed)  # each kind's files resampled among themselves: the spread between them
    spread = sorted(total({k: [rng.choice(fs) for _ in fs] for k, fs in by_kind.items()}) for _ in range(rounds))
    return total(by_kind), spread[len(spread) // 10], spread[(len(spread) * 9) // 10]


def compiled_roofline(options: PipelineOptions, hardware: str) -> float | None:
    """The compiled roofline (tokens/s per chip) of this run's full batch on a TPU worker, or
    None where it cannot be had here (not a TPU, no libtpu, or it did not compile)."""
    name, chips = parse_spec(hardware)
    if name == "cpu" or catalogue().get(name).kind != "tpu" or name in catalogue().measured:
        return None
    from docbeam.pipeline.encode import aot
    from docbeam.pipeline.launch.commands.compile_check import worker_settings

    try:
        t = aot.target(name, chips)
        settings = worker_settings(options, chips)[0][0][1]
        results = aot.compile_worker(settings, t, keys=[aot.largest_batch(settings, t)])
    except aot.CompileUnavailable:
        return None
    return results[0].bound_tokens_per_s if results[0].fits else None


# A Dataflow worker's start before its first batch: the VM, the container image's pull, the SDK's
# start. Not measured here (no Dataflow worker has been started by this project); the encoder's
# compile on the worker comes on top (docbeam compile: seconds per batch shape).
STARTUP_S = 300.0
STARTUP_BASIS = (
    f"{STARTUP_S / 60:.0f} min, ASSUMED: a Dataflow worker's boot, image pull and SDK start before its first batch "
    "(not measured: no worker was started); paid once per worker, then per-token rates apply"
)


def throughput_for(
    hardware: str,
    measured_here: float,
    cfg: EncoderConfig,
    context: float,
    dtype: str = "bfloat16",
    roofline: float | None = None,
) -> tuple[float, str]:
    """Tokens/s for all the hardware's chips, and where that number comes from: measured, else
    the compiled roofline (`roofline`, per chip) times an assumed efficiency, else peak x MFU."""
    name, count = parse_spec(hardware)
    if name == "cpu":
        return measured_here, "measured here on this machine, end to end (DirectRunner)"
    cat = catalogue()
    if name in cat.measured:
        return cat.measured[name] * count, f"measured with docbeam on {name} (pipeline/data/hardware.yaml)"
    if roofline:
        eff = cat.assumed_roofline_efficiency
        return roofline * eff * count, (
            f"COMPILED ROOFLINE x ASSUMED EFFICIENCY: {roofline:,.0f} tokens/s per chip bound by XLA's cost "
            f"analysis of this run's encoder compiled for {name} here (docbeam compile), x {eff:.0%} "
            f"efficiency (assumed), x {count} chip(s); no TPU has measured it"
        )
    acc = cat.get(name)
    peak = acc.peak_tflops.get(dtype) or acc.peak_tflops["bfloat16"]
    peak_dtype = dtype if dtype in acc.peak_tflops else "bfloat16"
    fpt = flops_per_token(cfg, context)
    per_chip = peak * 1e12 * cat.assumed_mfu / fpt
    hint = " (pip install 'docbeam[tpu]': a bound compiled for the chip instead)" if acc.kind == "tpu" else ""
    return per_chip * count, (
        f"ASSUMED: {peak} TFLOP/s {peak_dtype} peak x {cat.assumed_mfu:.0%} MFU / {fpt / 1e6:.1f} MFLOP "
        f"per token, x {count} chip(s); no measured figure for {name}{hint}"
    )


def bound_by(hardware: str, chips_doc_rate: float) -> dict:
    """The chips' rate and the worker's host rate in document tokens/s, and which is lower. On
    cpu the measured end-to-end rate is both (the encoder shares the cores with the host)."""
    chips = {"document_tokens_per_second": chips_doc_rate}
    if parse_spec(hardware)[0] == "cpu":
        return {"chips": chips, "host": chips, "binding": "measured end to end"}
    rates = catalogue().host
    host_rate, what, binding = rates.binding(worker_for(hardware)[1].vcpus, chips_doc_rate)
    host = {"document_tokens_per_second": host_rate, "what": what, "basis": rates.basis()}
    return {"chips": chips, "host": host, "binding": binding}


def project(
    sample: Sample,
    totals: dict,
    wall_seconds: float,
    hardware: str,
    pricing: str | None,
    cfg: EncoderConfig,
    dtype: str,
    startup_s: float = STARTUP_S,
    roofline: float | None = None,
    doc_tokens: list[int] | None = None,
    doc_ids: list[str] | None = None,
    tokens_by_file: dict[str, int] | None = None,
) -> dict:
    """Tokens are document tokens throughout (the text's tokens, what a run's summary and cost
    report count): the same figure with and without --extract. The encoder's work per document
    token (window overlaps, special tokens, extraction candidates) converts the hardware's
    encoder rate into document tokens per second. `doc_tokens`: each sampled document's."""
    enc = totals[Stage.ENCODE]
    ok = max(totals.get(Stage.ASSEMBLE, {}).get("elements_out", 0), 1)
    sample_doc_tokens = max(totals.get(Stage.ASSEMBLE, {}).get("tokens", 0), 1)
    tokens_per_doc = sample_doc_tokens / ok
    encoder_per_token = enc["tokens"] / sample_doc_tokens
    # A local run's time = what does not grow with the input (starting the job, building the
    # graph, the report: the sample run's time outside its metered stages) + the stages' time per
    # token; a sample's whole-run rate would charge that fixed part to every token (+12-16% on a
    # 2,000-document run).
    metered = sum(t.get("wall_us", 0) for t in totals.values()) / 1e6
    fixed = max(wall_seconds - metered, 0.0)  # projected for cpu only: an accelerator has its start-up
    measured = enc["tokens"] / max(wall_seconds - fixed, 1e-9)  # encoder tokens/s, the unit hardware rates come in
    rates = Rates(PriceTable.load(pricing), hardware)
    context = min(enc["tokens"] / ok, cfg.max_seq_len)
    rate, basis = throughput_for(hardware, measured, cfg, context, dtype, roofline)
    binds = bound_by(hardware, rate / encoder_per_token)
    doc_rate = min(binds["chips"]["document_tokens_per_second"], binds["host"]["document_tokens_per_second"])
    if tokens_by_file is not None and sample.bytes_of:  # by bytes per kind of file
        total_tokens, low, high = projected_tokens(sample, tokens_by_file)
    else:  # by documents (a sample without the bytes it stands for)
        total_tokens = low = high = tokens_per_doc * sample.total_docs_estimate
    seconds = total_tokens / doc_rate + (fixed if hardware == "cpu" else startup_s)
    usd = seconds / 3600 * rates.usd_per_hour
    each = sorted(doc_tokens or [])
    return {
        "input": {
            "files": sample.files,
            "bytes": sample.bytes_total,
            "documents_estimated": round(sample.total_docs_estimate),
        },
        "sample": {
            "documents": ok,
            "rejected": sample.rejected,
            "picked": f"drawn across files in proportion to their bytes (seed {sample.seed})",
            "files": dict(sample.taken),
            "doc_ids": list(doc_ids or []),
            "document_tokens_per_document": tokens_per_doc,
            "document_tokens_spread": {
                "min": each[0] if each else 0,
                "median": statistics.median(each) if each else 0,
                "p90": each[int(0.9 * (len(each) - 1))] if each else 0,
                "max": each[-1] if each else 0,
                "all": each,
            },
            "encoder_tokens_per_document_token": encoder_per_token,
            "document_tokens_per_second_here": measured / encoder_per_token,
            "fixed_seconds_here": fixed,  # the sample run's time outside its stages (cpu only)
            "padding": enc["pad_tokens"] / max(enc["tokens"] + enc["pad_tokens"], 1),
        },
        "projection": {
            "hardware": hardware,
            "documents": round(sample.total_docs_estimate),
            "document_tokens": total_tokens,
            # the 10th-90th percentile over resamples of the sampled files: time and dollars scale alike
            "document_tokens_interval": [low, high],
            "document_tokens_per_second": doc_rate,
            "encoder_tokens_per_second": doc_rate * encoder_per_token,
            "throughput_basis": basis,  # the chips' (or, on cpu, the whole run's measured here)
            **binds,
            "usd_per_1m_document_tokens": rates.usd_per_hour / 3600 / doc_rate * 1e6,
            "hours": seconds / 3600,
            "usd": usd,
            "usd_per_hour": rates.usd_per_hour,
            "price_basis": rates.basis + (" (assumed prices)" if rates.assumed else ""),
            "startup_seconds": 0 if hardware == "cpu" else startup_s,
        },
    }


def estimate(
    plan: JobPlan,
    options: PipelineOptions,
    *,
    sample_size: int,
    hardware: str,
    pricing: str | None,
    sample_output: str | None = None,
    compare: bool = False,
) -> dict | None:
    """Run `plan` on a sample of its input here and project the whole input on `hardware`
    (with `compare`, also on this machine's CPU and each accelerator Dataflow offers: the
    `compare` rows). The sample is read and run exactly as the job would be (the same plan,
    another output: `sample_output`, to be reused by the job itself, or a temporary folder).
    None when the sample is the whole input: running it would be the job itself."""
    listing = list_files(plan.inputs)
    files = sorted((path, size, name) for path, (size, name) in listing.items())
    sample = take_sample(files, sample_size, plan.parse)
    if sample_output is not None and sample.complete:
        return None
    if not sample.docs:
        raise UsageError("the sample has no readable documents; see `docbeam run` errors/ for why")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "sample.jsonl"
        rows = ({plan.parse.id_field: doc.doc_id, plan.parse.text_field: doc.text} for doc in sample.docs)
        src.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out = sample_output or str(Path(tmp) / "out")
        sample_plan = dataclasses.replace(plan, inputs=(for_glob(str(src)),), files=None, output=out, reuse=None)
        totals, wall = execute(sample_plan, options)
        written = outputs.read_table(out, tables.DOCUMENTS, ["doc_id", "n_tokens"])
    storage.reset_retry_count()
    by_id = dict(zip(written.column("doc_id").to_pylist(), written.column("n_tokens").to_pylist())) if written else {}
    ids = [d.doc_id for d in sample.docs if d.doc_id in by_id]  # the sample's order, its rejections left out
    tokens_by_file: dict[str, int] = {}
    for d in sample.docs:
        tokens_by_file[d.source] = tokens_by_file.get(d.source, 0) + by_id.get(d.doc_id, 0)

    def on(spec: str) -> dict:
        return project(
            sample,
            totals,
            wall,
            spec,
            pricing,
            plan.config,
            plan.encoder.dtype,
            roofline=compiled_roofline(options, spec),
            doc_tokens=[by_id[i] for i in ids],
            doc_ids=ids,
            tokens_by_file=tokens_by_file,
        )

    found = on(hardware)
    if compare:
        kinds = ["cpu", *(f"{a}:{min(catalogue().get(a).workers)}" for a in catalogue().on_dataflow())]
        asked = _canonical(hardware)  # `l4` and `l4:1` are one worker: one row
        found["compare"] = comparison([found if k == asked else on(k) for k in dict.fromkeys([asked, *kinds])])
    return found


def _canonical(spec: str) -> str:
    name, chips = parse_spec(spec)
    return "cpu" if name == "cpu" else f"{name}:{chips}"


def comparison(estimates: list[dict]) -> list[dict]:
    """One row per hardware kind: time, dollars, dollars per 1M document tokens at its binding
    rate, what binds (host, chips, or start-up when it is most of the time), and the input size
    above which it costs less than the CPU row (the first `cpu` estimate)."""
    cpu = next(e["projection"] for e in estimates if e["projection"]["hardware"] == "cpu")
    cpu_per_token = cpu["usd_per_hour"] / 3600 / cpu["document_tokens_per_second"]
    rows = []
    for e in estimates:
        p = e["projection"]
        per_token = p["usd_per_hour"] / 3600 / p["document_tokens_per_second"]
        start_usd = p["startup_seconds"] / 3600 * p["usd_per_hour"]
        binds = p["binding"] if p["binding"] != "measured end to end" else "measured"
        if p["startup_seconds"] > p["hours"] * 3600 / 2:
            binds = "start-up"
        above = None
        if p["hardware"] != "cpu" and per_token < cpu_per_token:  # start-up paid once, then cheaper per token
            above = start_usd / (cpu_per_token - per_token)
        rows.append(
            {
                "hardware": p["hardware"],
                "seconds": p["hours"] * 3600,
                "usd": p["usd"],
                "usd_per_1m_document_tokens": per_token * 1e6,
                "binds": binds,
                "cheaper_than_cpu_above_document_tokens": above,
                "never_cheaper": p["hardware"] != "cpu" and above is None,
                "basis": p["throughput_basis"],
                "assumed_prices": "assumed" in p["price_basis"],
            }
        )
    return rows


def render_comparison(rows: list[dict], document_tokens: float) -> str:
    """The table that decides: each hardware kind for this input."""
    head = (
        f"compare, for this input ({document_tokens:,.0f} document tokens; the CPU measured here, accelerators as "
        "their basis says; time and dollars with start-up, $/1M tokens at the binding rate without it; "
        "* assumed prices):"
    )
    lines = [head, f"  {'hardware':<14} {'time':>10} {'dollars':>10} {'$/1M tokens':>12} {'binds':<9} cheaper than cpu"]
    for r in rows:
        if r["hardware"] == "cpu":
            above = "-"
        elif r["never_cheaper"]:
            above = "never (more per token)"
        else:
            above = f"above {r['cheaper_than_cpu_above_document_tokens']:,.0f} document tokens"
        star = "*" if r["assumed_prices"] else " "
        lines.append(
            f"  {r['hardware']:<14} {r['seconds']:>9,.0f}s {r['usd']:>9,.4f}{star} "
            f"{r['usd_per_1m_document_tokens']:>12,.4f} {r['binds']:<9} {above}"
        )
    return "\n".join(lines)


def _binding_lines(p: dict) -> list[str]:
    if p["binding"] == "measured end to end":
        return []
    chips, host = p["chips"]["document_tokens_per_second"], p["host"]["document_tokens_per_second"]
    idle = 1 - min(host / chips, 1.0)
    return [
        f"            chips: {chips:,.0f} document tokens/s; host: {host:,.0f} document tokens/s, {p['host']['what']} "
        f"({p['host']['basis']})",
        f"            binds: the {p['binding']}"
        + (f" (the chips idle ~{idle:.0%} of the time)" if p["binding"] == "host" else "")
        + f"; at its rate ${p['usd_per_1m_document_tokens']:,.4f} per 1M document tokens, start-up aside",
    ]


def render(e: dict) -> str:
    """The projection and its basis: which documents were sampled and how, the spread of their
    tokens, and what a token is here (document tokens; the encoder's own, labelled as such)."""
    i, s, p = e["input"], e["sample"], e["projection"]
    spread, ids = s["document_tokens_spread"], s["doc_ids"]
    files = ", ".join(f"{name}: {n:,}" for name, n in s["files"].items())
    which = f"{ids[0]} ... {ids[-1]}" if len(ids) > 1 else (ids[0] if ids else "-")
    low, high = p["document_tokens_interval"]
    return "\n".join(
        [
            f"input:      {i['files']:,} files, {i['bytes'] / 2**20:,.1f} MiB, "
            f"~{i['documents_estimated']:,} documents (estimated)",
            f"sample:     {s['documents']:,} documents {s['picked']}, each drawn file giving its first records up to "
            f"an even share of the sample, from {len(s['files']):,} of {i['files']:,} files ({files}); "
            f"doc_ids {which}" + (f"; {s['rejected']:,} rejected record(s) skipped" if s["rejected"] else ""),
            f"            document tokens per document: mean {s['document_tokens_per_document']:,.0f}, "
            f"median {spread['median']:,.0f}, min {spread['min']:,}, p90 {spread['p90']:,}, max {spread['max']:,}",
            "            tokens here are document tokens (the text's tokens, as a run's summary counts them); the "
            f"encoder runs {s['encoder_tokens_per_document_token']:.2f} encoder tokens per document token "
            "(window overlaps, special tokens, extraction candidates)",
            f"            measured here: {s['document_tokens_per_second_here']:,.0f} document tokens/s in the run's "
            f"stages, plus {s['fixed_seconds_here']:.1f} s that do not grow with the input (start, report); "
            f"padding {s['padding']:.1%}",
            f"projection: {p['document_tokens']:,.0f} document tokens ({low:,.0f}-{high:,.0f}, the spread between "
            "sampled files of a kind; time and dollars vary with it), scaled by bytes per kind of file",
            f"            on {p['hardware']} at "
            f"{p['document_tokens_per_second']:,.0f} document tokens/s ({p['encoder_tokens_per_second']:,.0f} "
            "encoder tokens/s)",
            f"            throughput: {p['throughput_basis']}",
            *_binding_lines(p),
            f"            {p['hours'] * 3600:,.0f} s = {p['hours']:,.3f} h"
            + (f" (incl. {p['startup_seconds'] / 60:.0f} min start-up)" if p["startup_seconds"] else "")
            + f" x ${p['usd_per_hour']:,.4f}/h = ${p['usd']:,.4f}",
            f"            prices: {p['price_basis']}",
            *([f"            start-up: {STARTUP_BASIS}"] if p["startup_seconds"] else []),
            *([render_comparison(e["compare"], p["document_tokens"])] if e.get("compare") else []),
        ]
    )
