"""The run manifest and the accounting check: every input document ends in exactly one of
documents/ or errors/, and no doc_id appears twice in documents/."""

import datetime as dt
import platform
import sys
from collections import Counter
from importlib import metadata

from pipeline.io import outputs


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
    return {
        "holds": read == ok + rejected and not dupes,
        "read": read,
        "ok": ok,
        "rejected": rejected,
        "duplicate_doc_ids": sorted(dupes)[:20],
        "attention_used": sorted(set(docs.column("attention").to_pylist())) if docs is not None else [],
        "rejected_by_error": dict(Counter(e["error"] for e in errors)),
    }


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
) -> dict:
    match = stage_totals.get("match", {})
    parse = stage_totals.get("parse", {})
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
            "rejected_by_error": check["rejected_by_error"],
            # input records that are no documents by design (WARC requests, images, redirects)
            "skipped": parse.get("skipped", 0),
            "skipped_by_reason": {
                k[len("skipped_") :]: v for k, v in sorted(parse.items()) if k.startswith("skipped_")
            },
        },
        "accounting": {k: check[k] for k in ("holds", "read", "ok", "rejected", "duplicate_doc_ids")},
        "model": {
            "name": plan.model_name,
            "path": plan.encoder.model or "(default)",
            "weights_sha256": plan.weights_sha256,
            "dim": plan.config.hidden,
            "max_seq_len": plan.windowing.max_seq_len,
            "stride": plan.windowing.stride,
            "dtype": plan.encoder.dtype,
        },
        "attention": {**attention, "used_by_workers": check["attention_used"]},
        "versions": versions(),
        "platform": {"machine": platform.machine(), "system": platform.system(), "devices": devices},
        "options": options,
        "wall_seconds": round(wall_seconds, 3),
    }
