"""What the word- and sentence-bounded windows (chunking version 2) give against fixed-stride
token windows (version 1), on the embed benchmark's two corpora.

    python -m tests.benchmarks.chunk_stats [--docs 2000]

Version 1 is simulated exactly: windows of max_seq_len - 2 tokens every (that - stride)
tokens, cut wherever the count lands. Chunks per document and tokens per chunk set the
encoder's work (its cost); the boundary columns say what a retrieval system gets back.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000)
    args = ap.parse_args()

    from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
    from docbeam.model.tokenizer import load_tokenizer
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.ingest.chunking import Frame, Windowing, chunk_documents
    from docbeam.pipeline.ingest.sentences import sentences
    from tests.benchmarks.embed import build_corpus_file

    ckpt = describe_checkpoint(default_checkpoint_dir())
    tokenizer, _ = load_tokenizer(ckpt.path)
    frame = Frame.of(ckpt)
    win = Windowing(256, 32, specials=frame.count)

    print(
        f"{'corpus':<9}{'version':<9}{'chunks/doc':>11}{'tokens/chunk':>13}{'encoder tokens':>15}"
        f"{'start in word':>14}{'end at sentence':>16}{'s/1k docs':>10}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for mix in ("uniform", "mixed"):
            path = build_corpus_file(Path(tmp) / f"{mix}.jsonl", args.docs, mix)
            rows = [json.loads(line) for line in path.read_text().splitlines()]
            docs = [
                Document(uid=r["id"], doc_id=r["id"], source=mix, row=i, text=r["text"]) for i, r in enumerate(rows)
            ]
            ends = {d.uid: {s.end for s in sentences(d.text)} for d in docs}

            t0 = time.perf_counter()
            new = [(d, list(chunks)) for d, chunks in chunk_documents(docs, tokenizer, frame, win)]
            new_s = time.perf_counter() - t0
            spans = [(d, c.start_char, c.end_char, len(c.ids)) for d, cs in new for c in cs]
            _row(mix, "2", len(docs), spans, ends, new_s)

            t0 = time.perf_counter()
            old = []
            content, step = win.content, win.content - win.stride
            for d, enc in zip(docs, tokenizer.encode_batch([d.text for d in docs], add_special_tokens=False)):
                n = len(enc.ids)
                for s in range(0, max(1, n - win.stride), step):
                    e = min(n, s + content)
                    if e > s:
                        old.append((d, enc.offsets[s][0], enc.offsets[e - 1][1], e - s + 2))
                    if e == n:
                        break
            old_s = time.perf_counter() - t0
            _row(mix, "1", len(docs), old, ends, old_s)
    return 0


def _row(mix, version, n_docs, spans, ends, seconds) -> None:
    def in_word(text: str, at: int) -> bool:
        return 0 < at < len(text) and text[at - 1].isalnum() and text[at].isalnum()

    tokens = np.array([t for *_, t in spans], float)
    starts_in_word = sum(in_word(d.text, s) for d, s, _, _ in spans)
    at_sentence = sum(e in ends[d.uid] for d, _, e, _ in spans)
    print(
        f"{mix:<9}{version:<9}{len(spans) / n_docs:>11.2f}{tokens.mean():>13.1f}{int(tokens.sum()):>15,}"
        f"{starts_in_word / len(spans):>14.1%}{at_sentence / len(spans):>16.1%}{seconds / n_docs * 1000:>10.2f}"
    )


if __name__ == "__main__":
    sys.exit(main())
