"""docbeam's keyphrases against the `keybert` package, same model and settings.

    python -m tests.benchmarks.keybert_agreement [--docs 150] [--reference first-window|document]

KeyBERT: extract_keywords(keyphrase_ngram_range=(1, 2), stop_words="english", use_mmr=True,
diversity=0.5, top_n=5) with sentence-transformers on the same checkpoint. Agreement is the
top-5 overlap |ours ∩ theirs| / 5, compared case-insensitively (docbeam keeps the document's
casing, KeyBERT lower-cases), averaged over documents; reported separately for documents
that fit one 256-token window (KeyBERT truncates the document embedding there, docbeam does
not unless --keyphrase-reference first-window).

Two references: plain KeyBERT, whose candidate n-grams skip stop words and punctuation and
cross sentence boundaries, and KeyBERT given docbeam's own candidates (`candidates=`: n-grams
of runs of words that are text of the document, those docbeam embeds: every longer phrase and
the rarest single words, pipeline/extractors/keyphrases.py). The gap
between the two is what docbeam's rule (a keyphrase is a span of the document) costs in
agreement, a bounded, reported measure rather than parity; the second checks that everything
else (embeddings, reference, MMR) still matches.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

SETTINGS = {"keyphrase_ngram_range": (1, 2), "stop_words": "english", "use_mmr": True, "diversity": 0.5, "top_n": 5}


def _overlap(ours: dict[str, list[str]], theirs: dict[str, list[str]], chunks: dict[str, int]) -> dict:
    per_doc = {
        k: len({w.lower() for w in ours.get(k, [])} & {w.lower() for w in t}) / SETTINGS["top_n"]
        for k, t in theirs.items()
    }
    one = [v for k, v in per_doc.items() if chunks[k] == 1]
    many = [v for k, v in per_doc.items() if chunks[k] > 1]
    return {
        "documents": len(per_doc),
        "top5_overlap": float(np.mean(list(per_doc.values()))),
        "single_window": {"documents": len(one), "top5_overlap": float(np.mean(one)) if one else None},
        "multi_window": {"documents": len(many), "top5_overlap": float(np.mean(many)) if many else None},
    }


def _encoded(text: str, tokenizer) -> list[str]:
    """docbeam's candidates of `text` that ride its encoder pass (default settings)."""
    from docbeam.pipeline.extractors.keyphrases import Keyphrases, candidates

    phrases = list(candidates(text))
    n_tokens = {p: len(e.ids) for p, e in zip(phrases, tokenizer.encode_batch(phrases, add_special_tokens=False))}
    return sorted(Keyphrases().worth_encoding(n_tokens))


def measure(n_docs: int = 150, reference: str = "first-window") -> dict:
    """Run docbeam (the real pipeline) and KeyBERT on the same corpus; agreement with each reference."""
    from keybert import KeyBERT

    from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
    from tests.corpus import build_corpus
    from tests.helpers import run_job, table
    from tests.reference import st_model

    docs = build_corpus(n_docs, seed=21, min_words=20, max_words=300)
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs.jsonl"
        src.write_text("".join(json.dumps(d) + "\n" for d in docs))
        run_job(src, Path(tmp) / "out", "--extract", "keyphrases", "--keyphrase-reference", reference)
        rows = table(Path(tmp) / "out", "extractions").to_pylist()
        chunks = {d["doc_id"]: d["n_chunks"] for d in table(Path(tmp) / "out", "documents").to_pylist()}
    ours: dict[str, list[str]] = {}
    for r in rows:
        ours.setdefault(r["doc_id"], []).append(r["value"])
    kb = KeyBERT(model=st_model())
    plain = kb.extract_keywords([d["text"] for d in docs], **SETTINGS)
    # One call per document: a shared vocabulary would let another document's phrase match
    # across a sentence boundary here. The candidates docbeam embeds: its longer phrases and
    # its rarest single words (Keyphrases.worth_encoding).
    ckpt = describe_checkpoint(default_checkpoint_dir())
    same = [kb.extract_keywords(d["text"], candidates=_encoded(d["text"], ckpt.tokenizer), **SETTINGS) for d in docs]
    return {
        "reference": reference,
        "keybert": _overlap(ours, {d["id"]: [w for w, _ in t] for d, t in zip(docs, plain)}, chunks),
        "keybert_same_candidates": _overlap(ours, {d["id"]: [w for w, _ in t] for d, t in zip(docs, same)}, chunks),
    }


def report(result: dict) -> str:
    lines = []
    for key, what in [
        ("keybert", "keybert (its own candidates, which may cross sentences)"),
        ("keybert_same_candidates", "keybert given docbeam's in-sentence candidates"),
    ]:
        r = result[key]
        lines.append(f"top-5 overlap with {what}: {r['top5_overlap']:.3f} over {r['documents']} documents")
        lines.append(f"  fitting one window:       {r['single_window']['top5_overlap']:.3f}")
        if r["multi_window"]["documents"]:
            lines.append(f"  longer (several windows): {r['multi_window']['top5_overlap']:.3f}")
    lines.append(f"(docbeam --keyphrase-reference {result['reference']})")
    return "\n".join(lines)


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
    result = measure(args.docs, args.reference)
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
