"""The cost report: per stage seconds, bytes, tokens and dollars; totals; a chart.

Compute cost is the billed machine time of the run (wall seconds x the hourly rate of the
hardware from the price table). It is split over the stages by their share of the
metered wall time; what no stage metered (runner start-up, shuffles, sink I/O) is shown
as `other`, so the stage costs always add up to the total.
"""

import json
from pathlib import Path

from pipeline.core import tables
from pipeline.cost.metering import STAGES
from pipeline.cost.pricing import Rates
from pipeline.io import storage

SECONDS = {"wall_us": "wall_s", "cpu_us": "cpu_s", "device_us": "device_s", "compile_us": "compile_s"}
FIELDS = ("elements_in", "elements_out", "bytes_in", "bytes_out", "tokens", "pad_tokens", "rejected", "peak_rss_bytes")


def _stage_row(name: str, metrics: dict) -> dict:
    row = {"stage": name}
    row.update({f: int(metrics.get(f, 0)) for f in FIELDS})
    row.update({s: metrics.get(us, 0) / 1e6 for us, s in SECONDS.items()})
    return row


def stage_order(totals: dict) -> list[str]:
    extra = sorted(s for s in totals if s not in STAGES)
    return [s for s in STAGES if s in totals] + extra


def build(totals: dict, *, wall_seconds: float, documents: int, rates: Rates, remote: bool, storage_usd: float) -> dict:
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
    other = {"stage": "other", **{f: 0 for f in FIELDS}, **{s: 0.0 for s in SECONDS.values()}}
    other["wall_s"] = max(billed - metered, 0.0)
    other["share"] = other["wall_s"] / basis if basis else 0.0
    other["cost_usd"] = compute * other["share"]
    rows.append(other)
    total = compute + storage_usd
    encode = totals.get("encode", {})
    tokens = int(encode.get("tokens", 0))
    return {
        "hardware": rates.describe(),
        "wall_seconds": wall_seconds,
        "billed_seconds": billed,
        "billing_basis": "metered stage seconds (remote runner)" if remote else "job wall time on this machine",
        "stages": rows,
        "totals": {
            "documents": documents,
            "tokens": tokens,
            "pad_tokens": int(encode.get("pad_tokens", 0)),
            "compute_usd": compute,
            "storage_usd": storage_usd,
            "cost_usd": total,
            "usd_per_1m_tokens": total / tokens * 1e6 if tokens else None,
            "usd_per_1k_documents": total / documents * 1e3 if documents else None,
            "tokens_per_second": tokens / wall_seconds if wall_seconds else None,
        },
        "compile": {"compilations": int(encode.get("compilations", 0)), "seconds": encode.get("compile_us", 0) / 1e6},
        "memory": {
            "leak_warnings": int(encode.get("leak_warnings", 0)),
            "encoder_rss_growth_bytes": int(encode.get("rss_growth_bytes", 0)),
            "encoder_device_growth_bytes": int(encode.get("device_growth_bytes", 0)),
            "peak_rss_bytes": max((int(m.get("peak_rss_bytes", 0)) for m in totals.values()), default=0),
        },
        "price_table": rates.source(),
    }


def _money(x: float | None) -> str:
    if x is None:
        return "-"
    return f"${x:,.4f}" if x < 1 else f"${x:,.2f}"


def render_markdown(report: dict) -> str:
    t, hw = report["totals"], report["hardware"]
    lines = [
        "# docbeam cost report",
        "",
        f"Hardware: **{hw['name']}** at {_money(hw['usd_per_hour'])}/hour ({hw['basis']})"
        + (" (an assumed price: see the table below)" if hw["assumed"] else "")
        + ". "
        f"Billing basis: {report['billing_basis']}, {report['billed_seconds']:.1f} s.",
        "",
        f"**Total {_money(t['cost_usd'])}** (compute {_money(t['compute_usd'])}, storage {_money(t['storage_usd'])}) "
        f"for {t['documents']:,} documents and {t['tokens']:,} tokens: "
        f"**{_money(t['usd_per_1m_tokens'])} per 1M tokens**, {_money(t['usd_per_1k_documents'])} per 1k documents.",
        "",
        "| stage | in | out | wall s | cpu s | device s | tokens | padded | peak RSS MiB | cost | share |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["stages"]:
        lines.append(
            f"| {r['stage']} | {r['elements_in']:,} | {r['elements_out']:,} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | "
            f"{r['device_s']:.2f} | {r['tokens']:,} | {r['pad_tokens']:,} | {r['peak_rss_bytes'] / 2**20:,.0f} | "
            f"{_money(r['cost_usd'])} | {r['share']:.1%} |"
        )
    m, c = report["memory"], report["compile"]
    lines += [
        "",
        f"Encoder compilations: {c['compilations']} ({c['seconds']:.1f} s). "
        f"Padding: {t['pad_tokens'] / max(t['tokens'] + t['pad_tokens'], 1):.1%} of tokens fed to the encoder.",
        f"Memory: peak RSS {m['peak_rss_bytes'] / 2**20:,.0f} MiB; encoder growth after warm-up "
        f"{m['encoder_rss_growth_bytes'] / 2**20:+,.0f} MiB host"
        + (f", {m['encoder_device_growth_bytes'] / 2**20:+,.0f} MiB device" if m["encoder_device_growth_bytes"] else "")
        + (f". **LEAK WARNING: memory kept growing ({m['leak_warnings']} warning(s))**" if m["leak_warnings"] else "."),
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
    lines += ["", f"Price table: `{report['price_table']['file']}`."]
    return "\n".join(lines) + "\n"


def render_png(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["stages"]
    names = [r["stage"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.barh(names, [r["wall_s"] for r in rows], color="#4C78A8")
    ax1.set_xlabel("wall seconds")
    ax1.invert_yaxis()
    ax2.barh(names, [r["cost_usd"] for r in rows], color="#F58518")
    ax2.set_xlabel("USD")
    ax2.invert_yaxis()
    t = report["totals"]
    fig.suptitle(
        f"docbeam: {_money(t['cost_usd'])} total, {_money(t['usd_per_1m_tokens'])} per 1M tokens "
        f"({report['hardware']['name']})"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(report: dict, output: str) -> None:
    """_cost/report.json, report.md and stages.png under `output` (local or gs://)."""
    import tempfile

    storage.write_text(tables.join(output, tables.COST, "report.json"), json.dumps(report, indent=2))
    storage.write_text(tables.join(output, tables.COST, "report.md"), render_markdown(report))
    with tempfile.TemporaryDirectory() as tmp:
        png = Path(tmp) / "stages.png"
        render_png(report, png)
        storage.write_bytes(tables.join(output, tables.COST, "stages.png"), png.read_bytes(), content_type="image/png")


def summary_line(report: dict) -> str:
    t = report["totals"]
    top = max((r for r in report["stages"] if r["stage"] != "other"), key=lambda r: r["cost_usd"], default=None)
    line = (
        f"cost:      {_money(t['cost_usd'])} on {report['hardware']['name']}, {_money(t['usd_per_1m_tokens'])} "
        f"per 1M tokens, {_money(t['usd_per_1k_documents'])} per 1k documents"
    )
    if top:
        line += f" ({top['stage']} {top['share']:.0%} of the time)"
    if report["memory"]["leak_warnings"]:
        line += "\nWARNING:   encoder memory kept growing during the run (see _cost/report.md)"
    return line
