"""docbeam's keyphrases against the `keybert` package, same model and settings.

    python -m tests.benchmarks.keybert_agreement [--docs 150]

KeyBERT: extract_keywords(keyphrase_ngram_range=(1, 2), stop_words="english", use_mmr=True,
diversity=0.5, top_n=5) with sentence-transformers on the same checkpoint. Agreement is the
top-5 overlap |ours ∩ theirs| / 5, averaged over documents; reported separately for documents
that fit one 256-token window (KeyBERT truncates the document embedding there, docbeam does not).
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=150)
    ap.add_argument(
        "--reference",
        default="first-window",
        choices=["first-window", "document"],
        help="docbeam's --keyphrase-reference (first-window: KeyBERT's setting)",
    )
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    from keybert import KeyBERT

    from tests.corpus import build_corpus
    from tests.helpers import run_job, table
    from tests.reference import st_model

    docs = build_corpus(args.docs, seed=21, min_words=20, max_words=300)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs.jsonl"
        src.write_text("".join(json.dumps(d) + "\n" for d in docs))
        run_job(src, Path(tmp) / "out", "--extract", "keyphrases", "--keyphrase-reference", args.reference)
        rows = table(Path(tmp) / "out", "extractions").to_pylist()
        chunks = {d["doc_id"]: d["n_chunks"] for d in table(Path(tmp) / "out", "documents").to_pylist()}
    ours: dict[str, list[str]] = {}
    for r in rows:
        ours.setdefault(r["doc_id"], []).append(r["value"])
    kb = KeyBERT(model=st_model())
    theirs = kb.extract_keywords(
        [d["text"] for d in docs],
        keyphrase_ngram_range=(1, 2),
        stop_words="english",
        use_mmr=True,
        diversity=0.5,
        top_n=5,
    )
    overlap = {d["id"]: len(set(ours.get(d["id"], [])) & {w for w, _ in t}) / 5 for d, t in zip(docs, theirs)}
    one = [v for k, v in overlap.items() if chunks[k] == 1]
    many = [v for k, v in overlap.items() if chunks[k] > 1]
    result = {
        "documents": len(overlap),
        "top5_overlap": float(np.mean(list(overlap.values()))),
        "single_window": {"documents": len(one), "top5_overlap": float(np.mean(one)) if one else None},
        "multi_window": {"documents": len(many), "top5_overlap": float(np.mean(many)) if many else None},
    }
    result["reference"] = args.reference
    print(
        f"top-5 overlap with keybert: {result['top5_overlap']:.3f} over {len(overlap)} documents "
        f"(docbeam --keyphrase-reference {args.reference})"
    )
    print(f"  fitting one window:       {result['single_window']['top5_overlap']:.3f} ({len(one)} documents)")
    if many:
        print(f"  longer (several windows): {result['multi_window']['top5_overlap']:.3f} ({len(many)} documents)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
