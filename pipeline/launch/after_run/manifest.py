"""The run manifest and the accounting check: every input document ends in exactly one of
documents/ or errors/, and no doc_id appears twice in documents/."""

import datetime as dt
import json
import platform
import sys
from collections import Counter
from importlib import metadata

from docbeam.pipeline.core import stages, tables
from docbeam.pipeline.core.flags import rejection_limit
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.io import outputs, storage


def versions() -> dict:
    pkgs = [
        "docbeam",
        "apache-beam",
        "jax",
        "jaxlib",
        "numpy",
        "pyarrow",
        "tokenizers",
        "safetensors",
        "google-cloud-storage",
        "tenacity",
        "libtpu",
    ]
    out = {"python": sys.version.split()[0]}
    for p in pkgs:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            pass
    return out


def accounting(output: str, read: int) -> dict:
    """Read the outputs back and check the invariant read == ok + rejected, no duplicates."""
    docs = outputs.read_table(output, "documents", ["doc_id", "attention"])
    ids = docs.column("doc_id").to_pylist() if docs is not None else []
    dupes = {k: n for k, n in Counter(ids).items() if n > 1}
    errors = outputs.read_errors(output)
    ok, rejected = len(ids), len(errors)
    examples: dict[str, str] = {}
    for e in errors:
        examples.setdefault(e["error"], e["message"])
    return {
        "holds": read == ok + rejected and not dupes,
        "read": read,
        "ok": ok,
        "rejected": rejected,
        "duplicate_doc_ids": sorted(dupes)[:20],
        "attention_used": sorted(set(docs.column("attention").to_pylist())) if docs is not None else [],
        "rejected_by_error": dict(Counter(e["error"] for e in errors)),
        "examples": examples,  # the first message of each kind of rejection
    }


def verdict(
    check: dict,
    max_rejected: str,
    cost_usd: float | None = None,
    budget_usd: float | None = None,
    sinks: list[dict] | None = None,
) -> dict:
    """Whether the run did what it was asked: its accounting holds, it read documents, it
    rejected no more of them than --max-rejected allows (never all of them), and it cost no
    more than --budget-usd."""
    kind, value = rejection_limit(max_rejected)
    read, rejected = check["read"], check["rejected"]
    allowed = value if kind == "count" else value * read
    problems = []
    if not check["holds"]:
        problems.append("accounting check failed")
    if read == 0:
        problems.append("no documents were read")
    elif rejected == read:
        problems.append(f"every document ({read}) was rejected")
    elif rejected > allowed:
        problems.append(
            f"{rejected} of {read} documents rejected ({rejected / read:.1%}), over --max-rejected {max_rejected}"
        )
    for s in sinks or []:  # the sink's own accounting: every chunk of chunks/ is in the store
        if not s["holds"]:
            problems.append(
                f"sink {s['uri']}: {s['failed']} of {s['chunks']} chunks not written ({s.get('error')}); "
                f"their ids are in {s.get('error_file')}"
            )
    if budget_usd is not None and cost_usd is not None and cost_usd > budget_usd:
        problems.append(f"the run cost ${cost_usd:.2g}, over --budget-usd {budget_usd}")
    return {"ok": not problems, "problems": problems, "max_rejected": max_rejected}


def build(
    *,
    plan,
    options: dict,
    stage_totals: dict,
    check: dict,
    attention: dict,
    wall_seconds: float,
    devices: list[str],
    chunk_rows: int,
    extraction_rows: int,
    extractions_by_kind: dict[str, int] | None = None,
    documents_by_language: dict[str, int] | None = None,
) -> dict:
    match = stage_totals.get(Stage.MATCH, {})
    parse = stage_totals.get(Stage.PARSE, {})
    return {
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "inputs": {
            "globs": plan.globs,
            "files_matched": match.get("elements_out", 0),
            "bytes": match.get("bytes_out", 0),
        },
        "counts": {
            "read": check["read"],
            "ok": check["ok"],
            "rejected": check["rejected"],
            "chunks": chunk_rows,
            "extractions": extraction_rows,
            "extractions_by_kind": extractions_by_kind or {},
            # documents/ rows per `language` ("und": undetermined, English rules applied)
            "documents_by_language": documents_by_language or {},
            "rejected_by_error": check["rejected_by_error"],
            "rejected_examples": check["examples"],
            # input records that are no documents by design (WARC requests, images, redirects)
            "skipped": parse.get("skipped", 0),
            "skipped_by_reason": {
                k[len("skipped_") :]: v for k, v in sorted(parse.items()) if k.startswith("skipped_")
            },
            # lines left out of the text as layout: running headers/footers (PDF, man pages, paged
            # text), dot leaders (PDF), markup (Markdown front matter and HTML comments)
            "layout_lines_dropped": {k: parse.get(f"dropped_{k}_lines", 0) for k in ("running", "leader", "markup")},
            # the same running and leader counts under their first name, for readers of older runs
            "pdf_layout_lines_dropped": {k: parse.get(f"dropped_{k}_lines", 0) for k in ("running", "leader")},
            # documents an extractor writes nothing for by design, by reason (keyphrases of Japanese)
            "extractions_skipped": stages.extraction_skips(stage_totals),
        },
        "accounting": {k: check[k] for k in ("holds", "read", "ok", "rejected", "duplicate_doc_ids")},
        "model": {
            "name": plan.model_name,
            "path": plan.encoder.model or "(default)",
            "weights_sha256": plan.weights_sha256,
            **({"source": plan.model_source} if plan.model_source else {}),
            "files_sha256": plan.encoder.files_sha256,  # what every worker checked its files against
            "dim": plan.config.embedding_dim,
            "architecture": plan.config.arch,
            "pooling": list(plan.config.head.pooling),
            "prompt_name": plan.prompt_name,
            "max_seq_len": plan.windowing.max_seq_len,
            "stride": plan.windowing.stride,
            "dtype": plan.encoder.dtype,
            "dtype_reason": plan.dtype_reason,
        },
        **({"ner_model": ner_record(plan.ner)} if plan.ner else {}),
        # What every document's fingerprint hashes besides its text (`--reuse` compares these).
        "settings": {"hash": plan.settings_hash, "values": plan.settings},
        "attention": {**attention, "used_by_workers": check["attention_used"]},
        "versions": versions(),
        "platform": {"machine": platform.machine(), "system": platform.system(), "devices": devices},
        "options": options,
        "wall_seconds": round(wall_seconds, 3),
    }


def extraction_kinds(kinds: list[str], extractors: list) -> dict[str, int]:
    """Rows of extractions/ per `kind` (`entity:date`, `keyphrase`, ...), and 0 for an extractor
    that was asked for and wrote none (so the summary can say so)."""
    counts = Counter(kinds)
    for ex in extractors:
        if not any(ex.owns(k) for k in counts):
            counts[ex.row_kind] = 0
    return dict(sorted(counts.items()))


def ner_record(ner) -> dict:
    """--ner-model as run: the checkpoint, its labels and how tokens became entities."""
    return {
        "name": ner.model_name,
        "path": ner.encoder.model,
        "weights_sha256": ner.weights_sha256,
        "files_sha256": ner.encoder.files_sha256,
        "architecture": ner.config.arch,
        "labels": list(ner.labels),
        "aggregation": ner.aggregation,
        "max_seq_len": ner.windowing.max_seq_len,
        "dtype": ner.encoder.dtype,
    }


REMOVED_IDS = "doc_ids.jsonl"
# The documents of the run --overwrite replaced, kept (before its files go) while this run has
# a --sink: the store still holds their chunks, and only this run can delete those it lacks.
REPLACED_IDS = "doc_ids.replaced.jsonl"


def write_removed(output: str, doc_ids: list[str], name: str = REMOVED_IDS) -> None:
    """removed/doc_ids.jsonl (or `name`): one JSON object a line, {"doc_id": ...}, so an id
    holding a newline (or any character) stays one line."""
    # ASCII JSON: every control, line-separator or lone-surrogate character is escaped.
    lines = "".join(json.dumps({"doc_id": i}) + "\n" for i in doc_ids)
    storage.write_text(tables.join(output, tables.REMOVED, name), lines)


def read_removed(output: str, name: str = REMOVED_IDS) -> list[str]:
    """The doc_ids removed/doc_ids.jsonl (or `name`) lists; none when it does not exist."""
    path = tables.join(output, tables.REMOVED, name)
    if not storage.exists(path):
        return []
    return [json.loads(line)["doc_id"] for line in storage.read_text(path).split("\n") if line]


def removed_since(previous: str, output: str) -> list[str]:
    """doc_ids of the previous run this run's input no longer has (neither written nor
    rejected now): the input is the whole corpus, so they were deleted."""
    before = outputs.read_table(previous, tables.DOCUMENTS, ["doc_id"])
    now = outputs.read_table(output, tables.DOCUMENTS, ["doc_id"])
    seen = set(now.column("doc_id").to_pylist()) if now is not None else set()
    seen |= {e["doc_id"] for e in outputs.read_errors(output) if e.get("doc_id")}
    return sorted(set(before.column("doc_id").to_pylist()) - seen) if before is not None else []
