"""How good the extractions are, on hand-labelled sets and against KeyBERT.

    python -m tests.benchmarks.extraction_quality [--keybert-docs 150] [--json FILE]

- entities: exact-span precision and recall per type of the patterns on
  tests/extractors/data/entities_*.jsonl (dev: the patterns were written against it; check:
  written before, first-contact figures in docs/extractions.md; heldout: written after the
  patterns were final, never tuned on);
- labels: the default labels through the real pipeline on tests/extractors/data/labels_*.jsonl
  (same three roles), accuracy at the default --label-min-score and a sweep of it;
- keyphrases: KeyBERT agreement (tests/benchmarks/keybert_agreement.py, first-window).
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

SPLITS = ["dev", "check", "heldout"]
THRESHOLDS = [round(t, 2) for t in np.arange(0.0, 0.31, 0.02)]


def entity_quality() -> dict:
    from docbeam.pipeline.extractors.patterns import TYPES, find_entities
    from tests.extractors.labelled import entity_examples, score_entities

    out = {}
    for split in [*SPLITS, "all"]:
        names = [f"entities_{s}.jsonl" for s in (SPLITS if split == "all" else [split])]
        scores = score_entities(entity_examples(names), find_entities)
        out[split] = {k: {m: scores[k][m] for m in ("tp", "fp", "fn", "precision", "recall")} for k in TYPES}
    out["all_false"] = {k: v["false"] for k, v in score_entities(entity_examples(), find_entities).items()}
    out["all_missed"] = {k: v["missed"] for k, v in score_entities(entity_examples(), find_entities).items()}
    return out


def best_labels(docs: list[dict]) -> dict[str, tuple[str, float]]:
    """doc id -> (best default label, its score), through the real pipeline."""
    from tests.helpers import run_job, table, write_jsonl

    with tempfile.TemporaryDirectory() as tmp:
        src = write_jsonl(Path(tmp) / "labels.jsonl", [{"id": d["id"], "text": d["text"]} for d in docs])
        run_job(src, Path(tmp) / "out", "--extract", "labels", "--label-min-score", "-1", "--label-top-k", "1")
        rows = table(Path(tmp) / "out", "extractions").to_pylist()
    return {r["doc_id"]: (r["value"], r["score"]) for r in rows if r["kind"] == "label"}


def label_accuracy(docs: list[dict], best: dict[str, tuple[str, float]], min_score: float) -> dict:
    """accuracy: the document gets its gold label, or no label when it fits none (gold null);
    labelled_correct: over documents with a gold label; precision: of the labels emitted."""
    got = {d["id"]: (best[d["id"]][0] if best[d["id"]][1] >= min_score else None) for d in docs}
    labelled = [d for d in docs if d["label"]]
    emitted = [d for d in docs if got[d["id"]] is not None]
    return {
        "documents": len(docs),
        "accuracy": float(np.mean([got[d["id"]] == d["label"] for d in docs])),
        "labelled_correct": float(np.mean([got[d["id"]] == d["label"] for d in labelled])),
        "coverage": len([d for d in labelled if got[d["id"]]]) / len(labelled),
        "precision": float(np.mean([got[d["id"]] == d["label"] for d in emitted])) if emitted else 1.0,
        "none_left_unlabelled": float(np.mean([got[d["id"]] is None for d in docs if not d["label"]])),
    }


def labels_quality() -> dict:
    from docbeam.pipeline.core.flags import LABEL_MIN_SCORE
    from tests.extractors.labelled import load_jsonl

    docs = {s: load_jsonl(f"labels_{s}.jsonl") for s in SPLITS}
    best = best_labels([d for s in SPLITS for d in docs[s]])
    every = [d for s in SPLITS for d in docs[s]]
    return {
        "min_score": LABEL_MIN_SCORE,
        "at_default": {s: label_accuracy(docs[s], best, LABEL_MIN_SCORE) for s in SPLITS}
        | {"all": label_accuracy(every, best, LABEL_MIN_SCORE)},
        "sweep_dev_and_check": {t: label_accuracy(docs["dev"] + docs["check"], best, t) for t in THRESHOLDS},
        "per_label_all": {
            label: float(np.mean([best[d["id"]][0] == label for d in every if d["label"] == label]))
            for label in sorted({d["label"] for d in every if d["label"]})
        },
    }


def print_report(result: dict) -> None:
    ent = result["entities"]
    print("entities: exact-span precision / recall per type (found/false/missed)")
    print(f"  {'type':<7}" + "".join(f"{s:>24}" for s in [*SPLITS, "all"]))
    for kind in ent["all"]:
        cells = []
        for s in [*SPLITS, "all"]:
            c = ent[s][kind]
            cells.append(f"{c['precision']:.3f}/{c['recall']:.3f} ({c['tp']}/{c['fp']}/{c['fn']})")
        print(f"  {kind:<7}" + "".join(f"{c:>24}" for c in cells))
    for kind, values in ent["all_false"].items():
        if values:
            print(f"  false {kind}: {values}")
    for kind, values in ent["all_missed"].items():
        if values:
            print(f"  missed {kind}: {values}")

    lab = result["labels"]
    print(f"\nlabels (default labels, top-1, --label-min-score {lab['min_score']}):")
    print(f"  {'set':<8}{'docs':>6}{'accuracy':>10}{'labelled ok':>13}{'coverage':>10}{'precision':>11}{'none ok':>9}")
    for s, a in lab["at_default"].items():
        print(
            f"  {s:<8}{a['documents']:>6}{a['accuracy']:>10.3f}{a['labelled_correct']:>13.3f}"
            f"{a['coverage']:>10.3f}{a['precision']:>11.3f}{a['none_left_unlabelled']:>9.2f}"
        )
    print("  --label-min-score sweep on dev + check (accuracy, precision, coverage):")
    print(
        "    "
        + "  ".join(
            f"{t:.2f}: {a['accuracy']:.3f}/{a['precision']:.3f}/{a['coverage']:.2f}"
            for t, a in list(lab["sweep_dev_and_check"].items())
        )
    )
    print("  top-1 correct per label (all sets): " + ", ".join(f"{k} {v:.2f}" for k, v in lab["per_label_all"].items()))

    from tests.benchmarks.keybert_agreement import report

    print("\nkeyphrases:")
    print("  " + report(result["keybert"]).replace("\n", "\n  "))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--keybert-docs", type=int, default=150)
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    from tests.benchmarks.keybert_agreement import measure

    result = {"entities": entity_quality(), "labels": labels_quality(), "keybert": measure(args.keybert_docs)}
    print_report(result)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
