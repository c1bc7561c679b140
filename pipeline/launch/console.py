"""What a person sees: log set-up and the closing summary of a run."""

import logging
import sys

from pipeline.core.flags import UsageError, job_parser
from pipeline.cost import report
from pipeline.launch.job import RunResult, run

RUN_HELP = (
    "Embed documents (and extract, with --extract) into Parquet under --output. "
    "Any other Beam pipeline option (--runner, --direct_num_workers, ...) passes through."
)


def summary(res: RunResult) -> str:
    c = res.manifest["counts"]
    enc = res.stage_totals.get("encode", {})
    tokens = enc.get("tokens", 0)
    pad = enc.get("pad_tokens", 0)
    out = res.manifest["options"].get("output")
    lines = [
        f"documents: {c['read']} read, {c['ok']} ok, {c['rejected']} rejected"
        + (f" ({_counts(c['rejected_by_error'])})" if c["rejected"] else "")
        + (f"; {c['skipped']} records skipped ({_counts(c['skipped_by_reason'])})" if c.get("skipped") else ""),
        f"tokens:    {tokens:,} embedded in {c['chunks']:,} chunks, padding {pad / max(tokens + pad, 1):.1%}, "
        f"attention {res.manifest['attention']['used']}",
        f"time:      {res.wall_seconds:.1f}s wall, {tokens / max(res.wall_seconds, 1e-9):,.0f} tokens/s, "
        f"{c['ok'] / max(res.wall_seconds, 1e-9):.1f} docs/s",
        report.summary_line(res.cost),
        f"accounting: {'ok' if res.manifest['accounting']['holds'] else 'FAILED'}",
        f"output:    {out}/documents, chunks, extractions, errors, _manifest.json, _cost/report.md",
    ]
    return "\n".join(lines)


def _counts(by_kind: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(by_kind.items()))


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


def run_main(argv: list[str], prog: str) -> int:
    """`docbeam run` and `python -m pipeline.run`: run the job, print the summary; exit 0 when
    the accounting holds, 1 when it does not, 2 on a usage error (one line, no traceback)."""
    configure_logging()
    if "-h" in argv or "--help" in argv:
        job_parser(prog, RUN_HELP).print_help()
        return 0
    try:
        res = run(argv)
    except UsageError as exc:
        print(f"docbeam: {exc}", file=sys.stderr)
        return 2
    print(summary(res))
    return 0 if res.manifest["accounting"]["holds"] else 1
