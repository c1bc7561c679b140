"""Would candidates pooled from the chunk pass pick what separately encoded candidates pick?

    python -m tests.benchmarks.span_pooling [INPUT...] [--json FILE]

Today each summary sentence and keyphrase candidate is a segment of its own, encoded apart
from the chunk that holds it (issue 36 item 8: the four extractors took the encoder from
112,158 to 215,782 tokens). The alternative: one encoder pass over the chunks, and each
candidate's vector the mean of the chunk's final token states over the candidate's tokens
(the model's own pooling, mean over tokens, restricted to the span), normalised.

This measures it without changing docbeam: docbeam runs (`--extract summary,keyphrases`,
default settings) over the inputs (default: the labelled real documents,
tests/extractors/data/real/, and the bundled corpus, samples/docs/), and its rows are
today's picks. The script then parses the same files the run's way, builds each document's
candidates with the extractors' own code, pools each candidate from its chunk's token states
(the chunk's span from chunks/, tokenized with the model's tokenizer, run through
sentence-transformers' copy of the model, whose vectors docbeam matches to cosine 0.9999),
and picks with the extractors' own `extract` against the document embedding from documents/.
A candidate no single chunk holds whole keeps a separate encoding (counted).

Criterion, fixed before the first measurement: pooling is adopted for an extractor only if,
on each corpus, its pooled picks agree with today's at a mean per-document overlap of at
least 0.90 (|pooled picks & today's picks| / |today's picks|, over documents with picks).

Also reported, as a check of the harness: the same picks from candidates encoded separately
by the same model from the same token ids (should agree with docbeam's rows at about 1.0).
"""

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

DATA = Path(__file__).resolve().parents[1] / "extractors" / "data" / "real"
SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "docs"
CRITERION = 0.90
KINDS = {"summary": "summary", "keyphrases": "keyphrase"}


def real_files() -> list[str]:
    return [str(DATA / json.loads(line)["file"]) for line in (DATA / "labels.jsonl").read_text().splitlines()]


def sample_files() -> list[str]:
    return sorted(str(p) for p in SAMPLES.iterdir() if p.is_file())


def _documents(files: list[str], plan) -> dict:
    """doc_id -> Document, parsed as the run parses them."""
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.ingest.parse import parse_file

    def opener(path: str) -> Callable[[], BinaryIO]:
        return lambda: open(path, "rb")

    out = {}
    for f in files:
        for rec in parse_file(f, opener(f), plan.parse, Path(f).name):  # named as the run names a file
            if isinstance(rec, Document):
                out[rec.doc_id] = rec
    return out


def _token_states(windows: list[list[int]], batch: int = 64) -> list[np.ndarray]:
    """Each window's final token states ([its tokens, hidden]), windows padded in batches."""
    import torch

    from tests.reference import st_model

    model, out = st_model()[0].auto_model, []
    with torch.inference_mode():
        for i in range(0, len(windows), batch):
            part = windows[i : i + batch]
            width = max(len(w) for w in part)
            ids = torch.tensor([w + [0] * (width - len(w)) for w in part])
            mask = torch.tensor([[1] * len(w) + [0] * (width - len(w)) for w in part])
            states = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
            out += [states[j, : len(w)] for j, w in enumerate(part)]
    return out


def _separate(windows: list[list[int]]) -> list[np.ndarray]:
    """Each window's own vector, as docbeam encodes a candidate: mean of all its token states
    (specials included), normalised."""
    return [_unit(s.mean(0)) for s in _token_states(windows)]


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / max(float(np.linalg.norm(v)), 1e-12)).astype(np.float32)


def _picks(ex, info, embedding: np.ndarray, segs: list, vectors: list[np.ndarray]) -> set[tuple[int, int]]:
    """The (start, end) spans `ex` picks from these candidate vectors."""
    from docbeam.pipeline.core.records import SegmentVector

    sv = [
        SegmentVector(
            uid=s.uid,
            doc_id=s.doc_id,
            kind=s.kind,
            index=s.index,
            start_char=s.start_char,
            end_char=s.end_char,
            n_tokens=len(s.ids),
            vector=v,
            attention="",
            text=s.text,
        )
        for s, v in zip(segs, vectors)
    ]
    return {(r["start_char"], r["end_char"]) for r in ex.extract(info, embedding, sv, [], [])}


def measure(name: str, files: list[str]) -> dict:
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.model.tokenizer import load_tokenizer
    from docbeam.pipeline.core.records import DocInfo
    from docbeam.pipeline.launch.planning.planner import make_plan
    from tests.helpers import run_job, table

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        flags = ["--extract", "summary,keyphrases"]
        plan = make_plan(PipelineOptions(["--input", *files, "--output", str(out), *flags]))
        run_job(files, out, *flags)
        docs_rows = {r["doc_id"]: r for r in table(out, "documents", ["doc_id", "embedding", "text"]).to_pylist()}
        chunk_rows = table(out, "chunks", ["doc_id", "chunk_index", "start_char", "end_char"]).to_pylist()
        rows = table(out, "extractions").to_pylist()
    today: dict[tuple[str, str], set] = {}
    for r in rows:
        today.setdefault((r["doc_id"], r["kind"]), set()).add((r["start_char"], r["end_char"]))
    chunks: dict[str, list[tuple[int, int]]] = {}
    for c in sorted(chunk_rows, key=lambda c: c["chunk_index"]):
        chunks.setdefault(c["doc_id"], []).append((c["start_char"], c["end_char"]))

    documents = _documents(files, plan)
    tok, special = load_tokenizer(plan.encoder.local_checkpoint())
    exs = {ex.name: ex for ex in plan.extractors}
    seq = plan.windowing.max_seq_len
    overlap: dict[str, dict[str, list[float]]] = {k: {"pooled": [], "separate": []} for k in KINDS}
    counts: dict[str, dict[str, int]] = {k: {"candidates": 0, "not_in_one_chunk": 0, "same_set": 0} for k in KINDS}
    for doc_id, row in docs_rows.items():
        doc = documents[doc_id]
        text, embedding = row["text"], np.asarray(row["embedding"], np.float32)
        assert doc.text == text, f"{doc_id}: parsed text differs from the run's"
        encs = [tok.encode(text[s:e]) for s, e in chunks[doc_id]]
        chunk_states = _token_states([e.ids[:seq] for e in encs])
        states = [
            (s, e, st, enc.offsets[:seq], enc.special_tokens_mask[:seq])
            for (s, e), enc, st in zip(chunks[doc_id], encs, chunk_states)
        ]
        info = DocInfo(
            uid=doc.uid,
            doc_id=doc_id,
            source=doc.source,
            row=doc.row,
            n_chars=len(text),
            n_tokens=0,
            n_chunks=0,
            n_segments=0,
        )
        for name_, kind in KINDS.items():
            ex = exs[name_]
            segs = [s for s in ex.candidates(doc, tok, special, seq) if s.text is not None]
            if not segs:
                continue
            separate = _separate([list(map(int, s.ids)) for s in segs])
            pooled = []
            for i, seg in enumerate(segs):
                holder = next(
                    (
                        (cs, st, off, sp)
                        for cs, ce, st, off, sp in states
                        if cs <= seg.start_char and seg.end_char <= ce
                    ),
                    None,
                )
                picked = None
                if holder is not None:
                    cs, st, off, sp = holder
                    a, b = seg.start_char - cs, seg.end_char - cs
                    inside = [
                        j for j, (o, m) in enumerate(zip(off, sp)) if not m and o[1] > o[0] and o[0] >= a and o[1] <= b
                    ]
                    if inside:
                        picked = _unit(st[inside].mean(0))
                if picked is None:
                    counts[name_]["not_in_one_chunk"] += 1
                    picked = separate[i]
                pooled.append(picked)
            counts[name_]["candidates"] += len(segs)

            want = today.get((doc_id, kind), set())
            if not want:
                continue
            got_pooled = _picks(ex, info, embedding, segs, pooled)
            got_separate = _picks(ex, info, embedding, segs, list(separate))
            overlap[name_]["pooled"].append(len(got_pooled & want) / len(want))
            overlap[name_]["separate"].append(len(got_separate & want) / len(want))
            counts[name_]["same_set"] += got_pooled == want
    result = {}
    for k in KINDS:
        o, c = overlap[k], counts[k]
        n = len(o["pooled"])
        result[k] = {
            "documents": n,
            "candidates": c["candidates"],
            "not_in_one_chunk": c["not_in_one_chunk"],
            "pooled_overlap": float(np.mean(o["pooled"])) if n else None,
            "pooled_same_set": c["same_set"] / n if n else None,
            "separate_overlap": float(np.mean(o["separate"])) if n else None,
            "holds": bool(n and np.mean(o["pooled"]) >= CRITERION),
        }
    return {"corpus": name, "files": len(files), **result}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*", help="files to measure instead of the two default corpora")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    corpora = {"given": args.inputs} if args.inputs else {"labelled real": real_files(), "samples/docs": sample_files()}
    print(f"criterion: mean per-document overlap of pooled picks with today's >= {CRITERION}", flush=True)
    results = []
    for name, files in corpora.items():
        res = measure(name, files)
        results.append(res)
        for k in KINDS:
            r = res[k]
            print(
                f"{res['corpus']:<14} {k:<11} docs {r['documents']:>4}  candidates {r['candidates']:>6} "
                f"(not in one chunk {r['not_in_one_chunk']})  pooled overlap {r['pooled_overlap']:.3f} "
                f"same set {r['pooled_same_set']:.2f}  separate (harness check) {r['separate_overlap']:.3f}  "
                f"{'holds' if r['holds'] else 'does not hold'}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
