"""Label accuracy and coverage per label on the labelled real documents.

    python -m tests.benchmarks.real_labels [--label-file FILE] [--out DIR] [--json FILE]

The documents are tests/extractors/data/real/ (tests/benchmarks/collect_real_docs.py: licences,
man pages, HTML manuals, READMEs, changelogs from a Debian machine, labelled before docbeam ran
on them; gold `null` for documents no default label fits). docbeam runs once over them, the
real pipeline with `--extract labels` and every label's score kept (`--label-top-k` all,
`--label-min-score -1`), so the default rule and a sweep of its settings are scored from the
same run:

- accuracy: the document gets its gold label, or no label when its gold is null;
- per label: right (of the documents whose gold it is, those that get it), coverage (those
  that get any label), and precision (of the documents that get it, those whose gold it is).
"""

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "extractors" / "data" / "real"
NONE = "(none)"


def gold() -> list[dict]:
    return [json.loads(line) for line in (DATA / "labels.jsonl").read_text().splitlines()]


def scores(docs: list[dict], label_file: str | None = None, out: str | None = None) -> dict[str, dict[str, float]]:
    """doc_id -> {label: cosine} for every label, from one real run (`out`: keep it there)."""
    from tests.helpers import run_job, table

    with tempfile.TemporaryDirectory() as tmp:
        where = Path(out or Path(tmp) / "out")
        flags = ["--extract", "labels", "--label-min-score", "-1", "--label-top-k", "1000"]
        run_job(
            [str(DATA / d["file"]) for d in docs], where, *flags, *(["--label-file", label_file] if label_file else [])
        )
        rows = table(where, "extractions").to_pylist()
        sources = table(where, "documents", ["doc_id", "source"]).to_pylist()
    name = {r["doc_id"]: Path(r["source"]).name for r in sources}
    found: dict[str, dict[str, float]] = {d["file"]: {} for d in docs}
    for r in rows:
        if r["kind"] == "label":
            found[name[r["doc_id"]]][r["value"]] = r["score"]
    return found


Rule = Callable[[dict[str, float]], str | None]


def rule(min_score: float, margin: float = 0.0) -> Rule:
    """docbeam's top-1 rule: the best label when it scores at least `min_score`, else none; with
    `margin`, also none unless it leads the next label by that much (a rule docbeam does not
    apply: the sweep shows what it would do)."""

    def pick(s: dict[str, float]) -> str | None:
        ranked = sorted(s.items(), key=lambda kv: -kv[1])
        if not ranked or ranked[0][1] < min_score:
            return None
        if len(ranked) > 1 and ranked[0][1] - ranked[1][1] < margin:
            return None
        return ranked[0][0]

    return pick


def score(docs: list[dict], found: dict[str, dict[str, float]], pick: Rule) -> dict:
    got = {d["file"]: pick(found[d["file"]]) for d in docs}
    per_label = {}
    for label in sorted({str(d["label"]) if d["label"] else NONE for d in docs}):
        gold_is = [d for d in docs if (d["label"] or NONE) == label]
        emitted = [d for d in docs if (got[d["file"]] or NONE) == label]
        per_label[label] = {
            "documents": len(gold_is),
            "right": float(np.mean([(got[d["file"]] or NONE) == label for d in gold_is])),
            "coverage": float(np.mean([got[d["file"]] is not None for d in gold_is])),
            "precision": float(np.mean([d["label"] == got[d["file"]] for d in emitted])) if emitted else None,
        }
    labelled = [d for d in docs if d["label"]]
    return {
        "documents": len(docs),
        "accuracy": float(np.mean([got[d["file"]] == d["label"] for d in docs])),
        "coverage": float(np.mean([got[d["file"]] is not None for d in labelled])),
        "per_label": per_label,
        "wrong": {d["file"]: [d["label"], got[d["file"]]] for d in docs if got[d["file"]] != d["label"]},
    }


def measure(label_file: str | None = None, out: str | None = None) -> dict:
    from docbeam.pipeline.core import flags

    min_score = flags.LABEL_MIN_SCORE
    docs = gold()
    found = scores(docs, label_file, out)
    return {
        "label_file": label_file or "default",
        "min_score": min_score,
        "at_default": score(docs, found, rule(min_score)),
        "sweep_min_score": {t: score(docs, found, rule(t))["accuracy"] for t in np.round(np.arange(0, 0.41, 0.04), 2)},
        "sweep_margin": {
            m: score(docs, found, rule(min_score, m))["accuracy"] for m in np.round(np.arange(0, 0.09, 0.01), 2)
        },
    }


def print_report(res: dict) -> None:
    a = res["at_default"]
    print(
        f"labels ({res['label_file']}, --label-min-score {res['min_score']}): "
        f"{a['documents']} real documents, accuracy {a['accuracy']:.3f}, coverage {a['coverage']:.3f}"
    )
    print(f"  {'gold label':<26}{'docs':>6}{'right':>8}{'coverage':>10}{'precision':>11}")
    for label, s in a["per_label"].items():
        prec = "-" if s["precision"] is None else f"{s['precision']:.2f}"
        print(f"  {label:<26}{s['documents']:>6}{s['right']:>8.2f}{s['coverage']:>10.2f}{prec:>11}")
    print(
        "  accuracy by --label-min-score (margin 0): "
        + ", ".join(f"{t}: {v:.3f}" for t, v in res["sweep_min_score"].items())
    )
    print(
        "  accuracy by margin (default min score): "
        + ", ".join(f"{m}: {v:.3f}" for m, v in res["sweep_margin"].items())
    )
    for f, (want, got) in a["wrong"].items():
        print(f"  wrong: {f}: gold {want}, got {got}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--label-file", help="labels to measure instead of the default ones")
    ap.add_argument("--out", help="keep docbeam's output here")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    res = measure(args.label_file, args.out)
    print_report(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
