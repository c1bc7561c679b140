"""What a person sees: log set-up, the closing summary of a run, and its exit status."""

import logging
import os
import sys

from docbeam.pipeline.core.exit_status import ExitStatus
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost import report
from docbeam.pipeline.launch.running.job import Interrupted, RunResult, Stopped, run


def summary(res: RunResult) -> str:
    c = res.manifest["counts"]
    t = res.cost["totals"]
    enc = res.stage_totals.get(Stage.ENCODE, {})
    pad = enc.get("pad_tokens", 0)
    out = res.manifest["options"].get("output")
    wall = max(res.wall_seconds, 1e-9)
    lines = [
        f"documents: {c['read']} read, {c['ok']} ok, {c['rejected']} rejected"
        + (f" ({_counts(c['rejected_by_error'])})" if c["rejected"] else "")
        + (f"; {c['skipped']} records skipped ({_counts(c['skipped_by_reason'])})" if c.get("skipped") else ""),
        f"tokens:    {t['document_tokens']:,} document tokens in {c['chunks']:,} chunks; the encoder ran "
        f"{t['encoder_tokens']:,} (padding {pad / max(t['encoder_tokens'] + pad, 1):.1%}), attention "
        f"{res.manifest['attention']['used']}",
        *extraction_lines(c.get("extractions_by_kind", {})),
        *skip_lines(c.get("extractions_skipped", {})),
        *language_lines(res.manifest),
        *_reuse(res, wall),
        report.summary_line(res.cost),
        f"accounting: {'ok' if res.manifest['accounting']['holds'] else 'FAILED'}",
        *sink_lines(res.manifest.get("sinks", [])),
        f"output:    {out}/documents, chunks, extractions, errors, _manifest.json, _cost/report.md",
    ]
    return "\n".join(lines)


def sink_lines(sinks: list[dict]) -> list[str]:
    """One line per --sink store: what it holds after the run."""
    return [
        f"sink:      {s['uri']}: {s['written']:,} of {s['chunks']:,} chunks written, {s['deleted']:,} deleted"
        + (f", {s['truncated']:,} cut to the store's field limits" if s.get("truncated") else "")
        + ("" if s["holds"] else f" - FAILED, the ids of the rest are in {s.get('error_file')}")
        for s in sinks
    ]


def extraction_lines(by_kind: dict[str, int]) -> list[str]:
    """One line per kind of extraction row written (entities grouped, with their types):
    `extracted: 88 entity rows (date: 40, url: 48)`."""
    groups: dict[str, dict[str, int]] = {}
    for kind, n in by_kind.items():
        head, _, sub = kind.partition(":")
        groups.setdefault(head, {})
        if sub:
            groups[head][sub] = n
        else:
            groups[head][""] = groups[head].get("", 0) + n
    lines: list[str] = []
    for head, subs in groups.items():
        total = sum(subs.values())
        detail = {k: v for k, v in subs.items() if k}
        label = "" if lines else "extracted:"
        lines.append(f"{label:<11}{total:,} {head} rows" + (f" ({_counts(detail)})" if detail else ""))
    return lines


def skip_lines(skipped: dict[str, dict[str, int]]) -> list[str]:
    """`keyphrases: none for 3 documents (3 ja: written without spaces, no word segmenter)`."""
    lines = []
    for name, why in skipped.items():
        n = sum(why.values())
        reasons = "; ".join(f"{k:,} {r}" for r, k in why.items())
        lines.append(f"{name + ':':<10} none for {n:,} document{'s' if n != 1 else ''} ({reasons})")
    return lines


def language_lines(manifest: dict) -> list[str]:
    """Documents per language, and the English-only model warning when there is one."""
    by_language = manifest["counts"].get("documents_by_language") or {}
    lines = [f"languages: {', '.join(f'{k}: {n:,}' for k, n in by_language.items())}"] if by_language else []
    warning = (manifest.get("languages") or {}).get("warning")
    return [*lines, f"WARNING:   {warning}"] if warning else lines


def _reuse(res: RunResult, wall: float) -> list[str]:
    """The time line; after --reuse, what was reused and what encoded, and the rate of what was
    encoded (the reused tokens cost no encoder time: counting them would inflate it)."""
    t, c, r = res.cost["totals"], res.manifest["counts"], res.cost.get("reuse") or {}
    if "reuse" not in res.manifest:
        return [
            f"time:      {res.wall_seconds:.1f}s wall, {t['document_tokens'] / wall:,.0f} document tokens/s, "
            f"{c['ok'] / wall:.1f} docs/s"
        ]
    saved = r.get("saved_usd_estimate")
    return [
        f"reuse:     {r['documents_reused']:,} documents reused ({r['document_tokens_reused']:,} tokens copied), "
        f"{r['documents_encoded']:,} encoded ({r['document_tokens_encoded']:,} tokens)"
        + (f"; saved about {report.money(saved)} of encoding" if saved is not None else ""),
        f"time:      {res.wall_seconds:.1f}s wall, {r['document_tokens_encoded'] / wall:,.0f} encoded document "
        f"tokens/s, {c['ok'] / wall:.1f} docs/s (reused included)",
    ]


def _counts(by_kind: dict[str, int]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(by_kind.items()))


def top_rejections(manifest: dict, n: int = 5) -> list[str]:
    """The most frequent reasons documents were rejected, each with its first message (the
    messages name the fix: the fields a record has, the formats docbeam reads, ...)."""
    c = manifest["counts"]
    ranked = sorted(c["rejected_by_error"].items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return [f"  {n_err:>6,} {err}: {c['rejected_examples'].get(err, '')}" for err, n_err in ranked]


def exit_status(res: RunResult) -> tuple[int, list[str]]:
    """The run's exit status and, when it failed, the lines that say why."""
    verdict = res.manifest["verdict"]
    if verdict["ok"]:
        return ExitStatus.OK, []
    lines = [f"FAILED: {p}" for p in verdict["problems"]]
    if res.manifest["counts"]["rejected"]:
        lines += ["top reasons (errors/ has one line per rejected input):", *top_rejections(res.manifest)]
    sinks_hold = all(s["holds"] for s in res.manifest.get("sinks", []))
    accounting = res.manifest["accounting"]["holds"] and sinks_hold  # the sink's accounting counts apart
    status = ExitStatus.ACCOUNTING if not accounting else ExitStatus.REJECTED  # else: rejections, budget
    return status, lines


def _not_beam_resource_noise(record: logging.LogRecord) -> bool:
    # Beam 2.77 imports `resource` together with its torch-only ModelManager, so without torch
    # RunInference warns on every bundle that memory "cannot be fetched". docbeam meters memory
    # itself (metering, memwatch); the warning is noise.
    return not record.getMessage().startswith("Resource module is not available")


def _not_ml_rag_type_hint_noise(record: logging.LogRecord) -> bool:
    # Beam 2.77's VectorDatabaseWriteTransform (--sink) annotates its expand() with a PTransform
    # type, which Beam's own type checker then warns it ignores, twice per store.
    return not record.getMessage().startswith("This output type hint will be ignored")


def _not_an_interrupt(record: logging.LogRecord) -> bool:
    # Beam logs the KeyboardInterrupt that Ctrl-C raises inside a DoFn (with its stack) before
    # re-raising it; the run then ends with the one "interrupted" line, which says it all.
    # A chain can loop back on itself (a client's error that is its own context's context):
    # each exception is looked at once, or the filter spins forever inside Beam's error log.
    exc = record.exc_info[1] if record.exc_info else None
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return False
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return True


def configure_logging() -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("docbeam").setLevel(logging.INFO)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_not_beam_resource_noise)
        handler.addFilter(_not_an_interrupt)
        handler.addFilter(_not_ml_rag_type_hint_noise)


def run_main(argv: list[str], prog: str) -> int:
    """`docbeam run` and `python -m docbeam.pipeline.run`: run the job, print the summary, and exit
    with the status the module docstring of docbeam.pipeline.cli lists."""
    configure_logging()
    try:
        res = run(argv)
    except UsageError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return ExitStatus.USAGE
    except (Interrupted, KeyboardInterrupt) as exc:  # KeyboardInterrupt: before the first wave or after the last
        print(f"{prog}: {exc if isinstance(exc, Interrupted) else 'interrupted'}", file=sys.stderr)
        sys.stderr.flush()
        # Beam's worker threads may still be unwinding; their stack traces would bury the one
        # line that matters, and nothing they do now can be committed.
        os._exit(ExitStatus.INTERRUPTED)
    except Stopped as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.status
    print(summary(res))
    status, why = exit_status(res)
    for line in why:
        print(line, file=sys.stderr)
    return status
