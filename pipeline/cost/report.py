"""The cost report: per stage seconds, bytes, tokens and dollars; totals; charts.

Compute cost is the billed machine time of the run (wall seconds x the hourly rate of the
hardware from the price table). It is split over the stages by their share of the metered
wall time; what no stage metered (runner start-up, shuffles, sink I/O) is shown as `other`,
so the stage costs always add up to the total. The headline is per document token and per
document, the units a user budgets in; encoder tokens (which also count window overlaps and
extraction candidates) are shown beside them, named as such.
"""

import json
import math
import tempfile
from pathlib import Path

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.stages import Stage, extractor_of
from docbeam.pipeline.cost.pricing import Rates
from docbeam.pipeline.io import storage

SECONDS = {"wall_us": "wall_s", "cpu_us": "cpu_s", "device_us": "device_s", "compile_us": "compile_s"}
FIELDS = ("elements_in", "elements_out", "bytes_in", "bytes_out", "tokens", "pad_tokens", "rejected", "peak_rss_bytes")
# What each stage counts in and out.
UNITS: dict[str, tuple[str, str]] = {
    Stage.MATCH: ("inputs", "files"),
    Stage.PARSE: ("files", "documents"),
    Stage.REUSE: ("documents", "documents"),
    Stage.CHUNK: ("documents", "segments"),
    Stage.PACK: ("segments", "batches"),
    Stage.ENCODE: ("segments", "vectors"),
    Stage.ASSEMBLE: ("documents", "documents"),
    Stage.WRITE: ("rows", "rows"),
    Stage.NER_WINDOWS: ("documents", "windows"),
    Stage.NER_PACK: ("windows", "batches"),
    Stage.NER_ENCODE: ("windows", "label rows"),
    Stage.NER_ENTITIES: ("windows", "entities"),
    Stage.SINK: ("chunks", "chunks"),
}
TIMELINE_POINTS = 400
NOTES = (
    "`other` is time no stage metered: Beam's start-up, shuffles between stages, sink finalisation.",
    "`device s` is the time the encoder waited for its results; on a CPU run that is the same cores that do "
    "everything else, so it overlaps the other stages' seconds (on a CPU split into devices the encoder computes "
    "as it dispatches: its seconds are in `wall s`, and `device s` is small).",
    "Segments are what the encoder ran: chunks, plus extraction candidates and label descriptions.",
)


def units(stage: str) -> tuple[str, str]:
    return UNITS.get(stage, ("documents", "rows") if extractor_of(stage) else ("in", "out"))


def _stage_row(name: str, metrics: dict) -> dict:
    row: dict = {"stage": name, "unit_in": units(name)[0], "unit_out": units(name)[1]}
    row.update({f: int(metrics.get(f, 0)) for f in FIELDS})
    row.update({s: metrics.get(us, 0) / 1e6 for us, s in SECONDS.items()})
    return row


def stage_order(totals: dict) -> list[str]:
    extra = sorted(s for s in totals if s not in set(Stage))
    return [s.value for s in Stage if s in totals] + extra


def _downsample(timeline: list[dict]) -> list[dict]:
    step = max(1, -(-len(timeline) // TIMELINE_POINTS))
    return timeline[::step] + ([timeline[-1]] if timeline and (len(timeline) - 1) % step else [])


def build(
    totals: dict,
    *,
    wall_seconds: float,
    documents: int,
    rates: Rates,
    remote: bool,
    storage_usd: float,
    timeline: list[dict] | None = None,
    platform: str = "cpu",
) -> dict:
    """The cost report of a run from its stage totals. `platform`: where the encoder ran (cpu,
    gpu, tpu); on an accelerator the report says how busy the chips were kept."""
    rows = [_stage_row(s, totals[s]) for s in stage_order(totals)]
    metered = sum(r["wall_s"] for r in rows)
    # Locally the machine is billed for the run's wall time, whatever ran in parallel on it
    # (stage seconds of several worker processes can add up to more than the wall time). On
    # a remote runner the launcher does not see worker-hours, so the metered stage time is
    # the (lower-bound) basis.
    billed = metered if remote else wall_seconds
    compute = billed * rates.usd_per_hour / 3600
    basis = max(metered, billed)  # shares add up to 1 with or without parallel stages
    for r in rows:
        r["share"] = r["wall_s"] / basis if basis else 0.0
        r["cost_usd"] = compute * r["share"]
    other: dict = {"stage": "other", "unit_in": "", "unit_out": "", **{f: 0 for f in FIELDS}}
    other.update({s: 0.0 for s in SECONDS.values()})
    other["wall_s"] = max(billed - metered, 0.0)
    other["share"] = other["wall_s"] / basis if basis else 0.0
    other["cost_usd"] = compute * other["share"]
    rows.append(other)
    total = compute + storage_usd
    encode = totals.get(Stage.ENCODE, {})
    encoded_tokens = int(totals.get(Stage.ASSEMBLE, {}).get("tokens", 0))
    reused = totals.get(Stage.REUSE, {})
    reused_docs, reused_tokens = int(reused.get("elements_out", 0)), int(reused.get("tokens", 0))
    doc_tokens = encoded_tokens + reused_tokens
    encoder_tokens = int(encode.get("tokens", 0))
    return {
        "hardware": rates.describe(),
        "wall_seconds": wall_seconds,
        "billed_seconds": billed,
        "billing_basis": "metered stage seconds (remote runner)" if remote else "job wall time on this machine",
        "stages": rows,
        "totals": {
            "documents": documents,
            "document_tokens": doc_tokens,
            "encoder_tokens": encoder_tokens,
            "pad_tokens": int(encode.get("pad_tokens", 0)),
            "compute_usd": compute,
            "storage_usd": storage_usd,
            "cost_usd": total,
            "usd_per_1m_document_tokens": total / doc_tokens * 1e6 if doc_tokens else None,
            "usd_per_1k_documents": total / documents * 1e3 if documents else None,
            "usd_per_1m_encoder_tokens": total / encoder_tokens * 1e6 if encoder_tokens else None,
            "document_tokens_per_second": doc_tokens / wall_seconds if wall_seconds else None,
            "encoder_tokens_per_second": encoder_tokens / wall_seconds if wall_seconds else None,
        },
        "reuse": {
            "documents_reused": reused_docs,
            "document_tokens_reused": reused_tokens,
            "documents_encoded": documents - reused_docs,
            "document_tokens_encoded": encoded_tokens,
            **_saving(rows, encoded_tokens, reused_tokens, rates),
        },
        "compile": {"compilations": int(encode.get("compilations", 0)), "seconds": encode.get("compile_us", 0) / 1e6},
        "memory": {
            "leak_warnings": int(encode.get("leak_warnings", 0)),
            # The growth the warning logged, and the growth at the end of the run: both named.
            "encoder_rss_growth_when_warned_bytes": int(encode.get("rss_leak_bytes", 0)),
            "encoder_rss_growth_bytes": int(encode.get("rss_growth_bytes", 0)),
            "encoder_device_growth_bytes": int(encode.get("device_growth_bytes", 0)),
            "peak_rss_bytes": max((int(m.get("peak_rss_bytes", 0)) for m in totals.values()), default=0),
        },
        "device": _device(totals, wall_seconds, platform),
        "timeline": _downsample(timeline or []),
        "price_table": rates.source(),
    }


BUSY_WARNING = 0.5  # an accelerator idle more than half the run: the host work is what it waits for


def _device(totals: dict, wall_seconds: float, platform: str) -> dict:
    """How busy the encoder's devices were: their seconds (encode, and --ner-model's encoder)
    over the run's wall time."""
    seconds = sum(totals.get(s, {}).get("device_us", 0) for s in (Stage.ENCODE, Stage.NER_ENCODE)) / 1e6
    busy = seconds / wall_seconds if wall_seconds else 0.0
    return {
        "platform": platform,
        "seconds": seconds,
        "busy_fraction": busy,
        "warning": platform != "cpu" and busy < BUSY_WARNING,
    }


def device_line(report: dict) -> str:
    d = report["device"]
    line = f"{d['platform'].upper()} busy {d['busy_fraction']:.0%} of the run ({d['seconds']:,.1f} device s)"
    if d["warning"]:
        line += (
            f": below {BUSY_WARNING:.0%}, the host work (parse, chunk, pack, assemble) kept it waiting; "
            "more host processes (--host-processes) or a worker with more vCPUs per chip feed it faster"
        )
    return line


def money(x: float | None) -> str:
    """Dollars with enough digits to mean something (two significant ones below a dollar):
    $12.34, $0.50, $0.012, $0.000012."""
    if x is None:
        return "-"
    if x >= 1:
        return f"${x:,.2f}"
    if x <= 0:
        return "$0"
    return f"${x:.{max(2, 1 - math.floor(math.log10(x)))}f}"


def _count(n: int, unit: str) -> str:
    return f"{n:,} {unit}".strip() if n else "-"


def render_markdown(report: dict) -> str:
    t, hw = report["totals"], report["hardware"]
    lines = [
        "# docbeam cost report",
        "",
        f"**{money(t['usd_per_1m_document_tokens'])} per 1M document tokens, "
        f"{money(t['usd_per_1k_documents'])} per 1k documents.** "
        f"Total {money(t['cost_usd'])} (compute {money(t['compute_usd'])}, storage {money(t['storage_usd'])}) "
        f"for {t['documents']:,} documents of {t['document_tokens']:,} tokens.",
        "",
        *_reuse_lines(report),
        f"The encoder ran {t['encoder_tokens']:,} tokens ({money(t['usd_per_1m_encoder_tokens'])} per 1M encoder "
        "tokens): document tokens plus window overlaps, model special tokens and extraction candidates.",
        "",
        f"Hardware: **{hw['name']}** at {money(hw['usd_per_hour'])}/hour ({hw['basis']})"
        + (" (an assumed price: see the table below)" if hw["assumed"] else "")
        + f". Billing basis: {report['billing_basis']}, {report['billed_seconds']:.1f} s.",
        "",
        "| stage | in | out | wall s | cpu s | device s | encoder tokens | padded | peak RSS MiB | cost | share |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["stages"]:
        lines.append(
            f"| {r['stage']} | {_count(r['elements_in'], r.get('unit_in', ''))} | "
            f"{_count(r['elements_out'], r.get('unit_out', ''))} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
            f"{r['device_s']:.2f} | {r['tokens']:,} | {r['pad_tokens']:,} | {r['peak_rss_bytes'] / 2**20:,.0f} | "
            f"{money(r['cost_usd'])} | {r['share']:.1%} |"
        )
    m, c = report["memory"], report["compile"]
    leak = ""
    if m["leak_warnings"]:
        leak = (
            f". **LEAK WARNING: encoder memory kept growing: +{m['encoder_rss_growth_when_warned_bytes'] / 2**20:,.0f}"
            f" MiB when the warning fired (the figure in the log), {m['encoder_rss_growth_bytes'] / 2**20:+,.0f} MiB "
            "at the end**"
        )
    lines += [
        "",
        *NOTES,
        "",
        ("**WARNING: " + device_line(report) + "**." if report["device"]["warning"] else device_line(report) + "."),
        f"Encoder compilations: {c['compilations']} ({c['seconds']:.1f} s). "
        f"Padding: {t['pad_tokens'] / max(t['encoder_tokens'] + t['pad_tokens'], 1):.1%} of tokens fed to the encoder.",
        f"Memory: peak RSS {m['peak_rss_bytes'] / 2**20:,.0f} MiB; encoder growth after warm-up "
        f"{m['encoder_rss_growth_bytes'] / 2**20:+,.0f} MiB host"
        + (f", {m['encoder_device_growth_bytes'] / 2**20:+,.0f} MiB device" if m["encoder_device_growth_bytes"] else "")
        + (leak or "."),
        "",
        "![throughput and memory over the run; where the seconds went](stages.png)",
        "",
        "## Prices used",
        "",
        "| item | price | unit | region | as of | assumed | source |",
        "|---|---:|---|---|---|---|---|",
    ]
    for e in report["price_table"]["entries"]:
        lines.append(
            f"| {e['item']} | {e['usd']} | {e['unit']} | {e.get('region', '')} | {e.get('as_of', '')} | "
            f"{'yes' if e.get('assumed') else 'no'} | {e.get('source', '')} |"
        )
    lines += ["", f"Price table: `{report['price_table']['file']}`.", "", *decision_lines(report)]
    return "\n".join(lines) + "\n"


def decision_lines(report: dict) -> list[str]:
    """The row `docbeam estimate --compare` prints for a hardware kind, for this run as it ran:
    time, dollars, dollars per 1M document tokens, and what bound it (the accelerator's busy
    fraction says whether the chips or the host did)."""
    t, d = report["totals"], report["device"]
    binds = "the CPU (encoder and host share it)" if d["platform"] == "cpu" else "host" if d["warning"] else "chips"
    return [
        "## This run, in the terms of `docbeam estimate --compare`",
        "",
        "What `docbeam estimate --compare` projects per hardware kind, as this run came out ($ per 1M here is the "
        "whole run's cost: start-up and fixed parts included).",
        "",
        "| hardware | time | dollars | $ per 1M document tokens | binds |",
        "|---|---:|---:|---:|---|",
        f"| {report['hardware']['name']} | {report['wall_seconds']:,.1f} s | {money(t['cost_usd'])} | "
        f"{money(t['usd_per_1m_document_tokens'])} | {binds} |",
    ]


def _saving(rows: list[dict], encoded_tokens: int, reused_tokens: int, rates: Rates) -> dict:
    """What encoding the reused documents would have cost, priced at the encode stage's own
    seconds (its device waits and host work, compilation excluded) per document token it
    encoded in this run: not the whole run's cost per token, which start-up and the stages a
    reused document still passes through dominate in a small run."""
    encode = next((r for r in rows if r["stage"] == Stage.ENCODE), None)
    seconds = max(encode["wall_s"] - encode["compile_s"], 0.0) if encode else 0.0
    if not encoded_tokens or not seconds:
        return {"encode_usd_per_1m_document_tokens": None, "saved_usd_estimate": None}
    per_token = seconds * rates.usd_per_hour / 3600 / encoded_tokens
    return {"encode_usd_per_1m_document_tokens": per_token * 1e6, "saved_usd_estimate": per_token * reused_tokens}


def _reuse_lines(report: dict) -> list[str]:
    r = report.get("reuse") or {}
    if not r.get("documents_reused"):
        return []
    if r["saved_usd_estimate"] is None:
        saved = "No document was encoded in this run, so there is no encode cost to price the saving at."
    else:
        saved = (
            f"Saved about {money(r['saved_usd_estimate'])}: the reused tokens at the encode stage's own cost in "
            f"this run ({money(r['encode_usd_per_1m_document_tokens'])} per 1M document tokens encoded, from its "
            "device and host seconds, compilation excluded)."
        )
    return [
        f"Reused from the previous run (`--reuse`): {r['documents_reused']:,} documents, "
        f"{r['document_tokens_reused']:,} tokens, copied, not encoded; encoded: {r['documents_encoded']:,} "
        f"documents, {r['document_tokens_encoded']:,} tokens. {saved}",
        "",
    ]


def figure(report: dict):
    """Throughput and memory over the run (where a timeline was recorded), and where the
    seconds and dollars went per stage. Text is never read as math: '$' stays a dollar."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with plt.rc_context({"text.parse_math": False}):
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
        line = report.get("timeline") or []
        if len(line) >= 2:
            ts = [p["t"] for p in line]
            w = max(1, len(line) // 30)  # rate over a sliding window: batches arrive in bursts
            rates = [
                (line[i]["tokens"] - line[max(0, i - w)]["tokens"]) / max(ts[i] - ts[max(0, i - w)], 1e-9)
                for i in range(len(line))
            ]
            ax1.plot(ts, rates, color="#4C78A8", label="document tokens/s")
            ax1.set_xlabel("seconds since start")
            ax1.set_ylabel("document tokens/s")
            ax1.set_ylim(bottom=0)
            mem = ax1.twinx()
            mem.plot(ts, [p["rss_bytes"] / 2**20 for p in line], color="#E45756", label="resident memory, MiB")
            mem.set_ylabel("resident memory, MiB")
            mem.set_ylim(bottom=0)
            handles = ax1.get_legend_handles_labels()[0] + mem.get_legend_handles_labels()[0]
            ax1.legend(handles=handles, loc="lower right", fontsize=8)
            ax1.set_title("throughput and memory over the run")
        else:
            ax1.text(0.5, 0.5, "no timeline (remote runner)", ha="center", va="center", transform=ax1.transAxes)
            ax1.set_axis_off()
        rows = report["stages"]
        names = [r["stage"] for r in rows]
        bars = ax2.barh(names, [r["wall_s"] for r in rows], color="#4C78A8")
        ax2.bar_label(bars, labels=[money(r["cost_usd"]) for r in rows], padding=3, fontsize=8)
        ax2.set_xlabel("wall seconds (label: cost)")
        ax2.invert_yaxis()
        ax2.set_title("where the seconds went")
        t = report["totals"]
        fig.suptitle(
            f"docbeam: {money(t['cost_usd'])} total, {money(t['usd_per_1m_document_tokens'])} per 1M document "
            f"tokens, {money(t['usd_per_1k_documents'])} per 1k documents ({report['hardware']['name']})"
        )
    return fig


def render_png(report: dict, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = figure(report)
    fig.savefig(path, dpi=110)
    plt.close(fig)


FILES = ("report.json", "report.md", "stages.png")  # what `write` puts under _cost/


def write(report: dict, output: str) -> None:
    """_cost/report.json, report.md and stages.png under `output` (local or gs://)."""
    as_json, as_markdown, as_png = (tables.join(output, tables.COST, name) for name in FILES)
    storage.write_text(as_json, json.dumps(report, indent=2))
    storage.write_text(as_markdown, render_markdown(report))
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "stages.png"
        render_png(report, png)
        storage.write_bytes(as_png, png.read_bytes(), content_type="image/png")


def summary_line(report: dict) -> str:
    t = report["totals"]
    top = max((r for r in report["stages"] if r["stage"] != "other"), key=lambda r: r["cost_usd"], default=None)
    line = (
        f"cost:      {money(t['cost_usd'])} on {report['hardware']['name']}: "
        f"{money(t['usd_per_1m_document_tokens'])} per 1M document tokens, "
        f"{money(t['usd_per_1k_documents'])} per 1k documents"
    )
    if top:
        line += f" ({top['stage']} {top['share']:.0%} of the time)"
    if report["device"]["platform"] != "cpu":
        line += f"\n{'WARNING:' if report['device']['warning'] else 'device:':<11}{device_line(report)}"
    if report["memory"]["leak_warnings"]:
        line += "\nWARNING:   encoder memory kept growing during the run (see _cost/report.md)"
    return line
