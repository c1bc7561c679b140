"""The retrieval check: labelled questions over the sample corpus (tests/search/data/questions.jsonl,
written from the documents' text and fixed before anything was measured or tuned). A question's
relevant chunks are every chunk whose text holds its `answer` passage (the samples' excerpts
overlap, so a passage can sit in several chunks); recall@k is the share of questions with a
relevant chunk among the top k.

    python -m tests.search.quality out/sample      # recall@1/5/10 of a run of samples/docs
"""

import json
import sys
from pathlib import Path

from docbeam.pipeline.search.hits import exact_rows
from docbeam.pipeline.search.query import embed_queries
from docbeam.pipeline.search.run_chunks import open_run, read_rows

QUESTIONS = Path(__file__).parent / "data" / "questions.jsonl"
KS = (1, 5, 10)


def questions() -> list[dict]:
    return [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]


def recall(run: str, ks: tuple[int, ...] = KS) -> dict[int, float]:
    """recall@k for each k over the labelled questions, searching `run` exactly."""
    chunks = open_run(run)
    qs = questions()
    vectors = embed_queries(chunks.manifest["model"], [q["q"] for q in qs])
    _, rows = exact_rows(chunks, vectors, max(ks))
    text = read_rows(chunks, sorted({int(r) for r in rows.ravel()}), ("text",))
    first_relevant = []
    for q, ranked in zip(qs, rows):
        hits = [i for i, r in enumerate(ranked) if q["answer"] in (text[int(r)]["text"] or "")]
        first_relevant.append(hits[0] + 1 if hits else None)
    return {k: sum(1 for f in first_relevant if f is not None and f <= k) / len(qs) for k in ks}


if __name__ == "__main__":
    got = recall(sys.argv[1])
    print(f"{len(questions())} questions: " + ", ".join(f"recall@{k} {v:.2f}" for k, v in got.items()))
