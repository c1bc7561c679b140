"""The hand-labelled sets in tests/extractors/data/ and how they are scored (tests and benchmarks).

entities*.jsonl: one text per line, each entity marked inline as `[[type:value]]` (the markup
is removed to get the text and the gold spans). labels*.jsonl: `id`, `text`, `label` (a
default label, or null for a document that fits none of them).
"""

import json
import re
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
ENTITY_SETS = ["entities_dev.jsonl", "entities_check.jsonl", "entities_heldout.jsonl"]
LABEL_SETS = ["labels_dev.jsonl", "labels_check.jsonl", "labels_heldout.jsonl"]
MARK = re.compile(r"\[\[(\w+):(.*?)\]\]")


def parse_marked(marked: str) -> tuple[str, list[tuple[str, int, int]]]:
    """`Call [[phone:+44 20 7946 0958]]` -> ("Call +44 20 7946 0958", [("phone", 5, 21)])."""
    parts, gold, at, pos = [], [], 0, 0
    for m in MARK.finditer(marked):
        parts.append(marked[pos : m.start()])
        at += m.start() - pos
        gold.append((m.group(1), at, at + len(m.group(2))))
        parts.append(m.group(2))
        at += len(m.group(2))
        pos = m.end()
    parts.append(marked[pos:])
    return "".join(parts), gold


def load_jsonl(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line.strip()]


def entity_examples(names: list[str] = ENTITY_SETS) -> list[dict]:
    """[{id, group, text, gold: [(type, start, end)]}] over the given sets."""
    out = []
    for name in names:
        for r in load_jsonl(name):
            text, gold = parse_marked(r["text"])
            out.append({"id": r["id"], "group": r["group"], "text": text, "gold": gold})
    return out


def score_entities(examples: list[dict], find: Callable[[str], list[tuple]]) -> dict[str, dict]:
    """Exact-span precision and recall per type: a found entity counts only with the same
    type, start and end as a gold one. `find(text)` -> [(type, value, start, end)]."""
    counts: dict[str, dict] = {}
    for ex in examples:
        gold = set(ex["gold"])
        found = {(k, s, e) for k, _, s, e in find(ex["text"])}
        for kind in {k for k, _, _ in gold | found}:
            c = counts.setdefault(kind, {"tp": 0, "fp": 0, "fn": 0, "false": [], "missed": []})
            g = {x for x in gold if x[0] == kind}
            f = {x for x in found if x[0] == kind}
            c["tp"] += len(g & f)
            c["fp"] += len(f - g)
            c["fn"] += len(g - f)
            c["false"] += [ex["text"][s:e] for _, s, e in sorted(f - g, key=lambda x: x[1])]
            c["missed"] += [ex["text"][s:e] for _, s, e in sorted(g - f, key=lambda x: x[1])]
    for c in counts.values():
        c["precision"] = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        c["recall"] = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
    return dict(sorted(counts.items()))


def label_documents(names: list[str] = LABEL_SETS) -> list[dict]:
    return [r for name in names for r in load_jsonl(name)]
