"""What the packer makes the encoder compute, on the embed benchmark's corpora: padding and
attention work per real token, with shorter segments filling longer rows' room and without.

    python -m tests.benchmarks.packing_cost [--docs 2000]

Exact counts from the real chunker and packer (one bundle), no timing: tokens fed (real +
padding), attention score entries per real token (each row attends over its whole length)
against what attending over each segment's own length would cost (sentence-transformers'
batches by length do nearly that), and a cost in full-row token units from the encoder's
profile (dense layers ~80% of a 256-token row's time, attention ~20% and linear in length).
"""

import argparse
import dataclasses
import json
import sys
import tempfile
from pathlib import Path

ATTENTION_SHARE = 0.2  # of a token's time at 256 (`python -m tests.benchmarks.profile_encoder`: 20-24%)


def segments(mix: str, docs: int, tmp: Path) -> list:
    from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
    from docbeam.model.tokenizer import load_tokenizer
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.ingest.chunking import Frame, Windowing, chunk_documents
    from tests.benchmarks.embed import build_corpus_file

    ckpt = describe_checkpoint(default_checkpoint_dir())
    tokenizer, _ = load_tokenizer(ckpt.path)
    frame = Frame.of(ckpt)
    rows = [json.loads(line) for line in build_corpus_file(tmp / f"{mix}.jsonl", docs, mix).read_text().splitlines()]
    found = [Document(uid=r["id"], doc_id=r["id"], source=mix, row=i, text=r["text"]) for i, r in enumerate(rows)]
    return [
        s
        for _, chunks in chunk_documents(found, tokenizer, frame, Windowing(256, 32, specials=frame.count))
        for s in chunks
    ]


def measure(segs: list, spec) -> dict:
    from docbeam.pipeline.encode.packing import Packer

    packer = Packer(spec)
    batches = [b for s in segs for b in packer.add(s)] + list(packer.flush())
    real = sum(b.real_tokens for b in batches)
    fed = sum(b.tokens.size for b in batches)
    top = spec.seq_len
    return {
        "fed": fed,
        "padding": 1 - real / fed,
        "attention": sum(b.shape[0] * b.shape[1] ** 2 for b in batches) / real,
        "own_length": sum(min(s.n_tokens, top) ** 2 for s in segs) / real,
        "cost": sum(b.tokens.size * (1 - ATTENTION_SHARE + ATTENTION_SHARE * b.shape[1] / top) for b in batches) / real,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000)
    args = ap.parse_args()
    from docbeam.pipeline.encode.packing import spec_for

    head = f"{'corpus':<9}{'batch':<9}{'packing':<16}{'tokens fed':>12}{'padding':>9}"
    print(f"{head}{'attn/token':>11}{'own length':>11}{'cost':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for mix in ("uniform", "mixed"):
            segs = segments(mix, args.docs, Path(tmp))
            for platform in ("cpu", "gpu"):  # the default batch on each: 4 and 32 rows of 256
                for label, fill in (("rows apart", False), ("filled", True)):
                    spec = spec_for(256, platform)
                    m = measure(segs, dataclasses.replace(spec, fill=fill))
                    print(
                        f"{mix:<9}{f'{spec.rows}x256':<9}{label:<16}{m['fed']:>12,}{m['padding']:>9.1%}"
                        f"{m['attention']:>11.0f}{m['own_length']:>11.0f}{m['cost']:>8.4f}"
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
