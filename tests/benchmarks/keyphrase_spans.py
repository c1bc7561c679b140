"""Are docbeam's keyphrases text of the document? And how often do they agree with KeyBERT?

    python -m tests.benchmarks.keyphrase_spans INPUT... [--keybert] [--out DIR] [--json FILE]

Runs docbeam (the real pipeline, default settings, `--extract keyphrases`) over the inputs
and counts the keyphrases whose value is exactly `text[start_char:end_char]` of their
document (verbatim). With `--keybert`, also the top-5 overlap with plain KeyBERT
(`extract_keywords` with KeyBERT's defaults plus MMR 0.5, as tests/benchmarks/keybert_agreement.py,
on the same checkpoint), compared case-insensitively, averaged over documents with keyphrases.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path


def measure(inputs: list[str], keybert: bool = False, out: str | None = None) -> dict:
    """`out`: keep docbeam's output there, and measure an output already there instead of running."""
    from tests.helpers import run_job, table

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(out or Path(tmp) / "out")
        if not (where / "_manifest.json").exists():
            run_job(inputs, where, "--extract", "keyphrases")
        texts = {d["doc_id"]: d["text"] for d in table(where, "documents", ["doc_id", "text"]).to_pylist()}
        rows = [r for r in table(where, "extractions").to_pylist() if r["kind"] == "keyphrase"]
    bad = [r for r in rows if texts[r["doc_id"]][r["start_char"] : r["end_char"]] != r["value"]]
    out = {
        "documents": len(texts),
        "documents_with_keyphrases": len({r["doc_id"] for r in rows}),
        "keyphrases": len(rows),
        "verbatim": len(rows) - len(bad),
        "not_verbatim_examples": [(r["value"], texts[r["doc_id"]][r["start_char"] : r["end_char"]]) for r in bad[:15]],
    }
    if keybert:
        from keybert import KeyBERT

        from tests.benchmarks.keybert_agreement import SETTINGS
        from tests.reference import st_model

        ours: dict[str, set[str]] = {}
        for r in rows:
            ours.setdefault(r["doc_id"], set()).add(r["value"].lower())
        kb = KeyBERT(model=st_model())
        ids = sorted(ours)
        theirs = kb.extract_keywords([texts[i] for i in ids], **SETTINGS)
        overlap = [len(ours[i] & {w for w, _ in t}) / SETTINGS["top_n"] for i, t in zip(ids, theirs)]
        out["keybert_top5_overlap"] = sum(overlap) / len(overlap) if overlap else None
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--keybert", action="store_true", help="also the top-5 overlap with plain KeyBERT")
    ap.add_argument("--out", help="keep docbeam's output here (or measure the one already there)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    result = measure(args.inputs, args.keybert, args.out)
    print(
        f"{result['verbatim']} of {result['keyphrases']} keyphrases verbatim "
        f"({result['documents_with_keyphrases']} of {result['documents']} documents have keyphrases)"
    )
    if "keybert_top5_overlap" in result:
        print(f"top-5 overlap with plain KeyBERT: {result['keybert_top5_overlap']:.3f}")
    for value, span in result["not_verbatim_examples"]:
        print(f"  {value!r} <- {span!r}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
