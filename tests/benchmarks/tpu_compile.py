"""The README's compiled-bounds table: `docbeam compile` for TPU workers, on this machine.

    python -m tests.benchmarks.tpu_compile                 # the default model on v5e, v6e, v5p (4 chips)
    python -m tests.benchmarks.tpu_compile --modernbert    # a ModernBERT-base-sized random model at 8,192
    python -m tests.benchmarks.tpu_compile --parity        # bfloat16 vs float32 vectors, on this CPU

The ModernBERT check builds random weights of ModernBERT-base's shape (22 layers, 768 wide,
12 heads, local window 128 on two of every three layers) with transformers, then compiles every
batch shape a v5e worker would build at --max-seq-len 8192. Compiled bounds, not measurements.
Needs the test and tpu extras (torch, transformers, libtpu); minutes per TPU type on 2 cores.

--parity encodes real texts (the bundled samples' articles and a fresh seed of the tests'
corpus, every chunk of every document) with the default model through `EncoderRuntime`, in
float32 and in bfloat16 (the dtype policy a TPU worker compiles), and prints the cosine of
each bfloat16 vector to its float32 one; the design's floor is 0.9999. `--save F.npz` keeps
the float32 vectors, `--same-as F.npz` says whether they are bit-for-bit those of a saved run.
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # compile-only TPU devices; nothing runs on a chip


def modernbert_base(dest: Path) -> Path:
    """A ModernBERT-base-shaped checkpoint with random weights, as sentence-transformers saves it."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import ModernBertConfig, ModernBertModel

    from tests.model.builders import _vocab_size, _wordpiece

    src = dest / "transformer"
    src.mkdir(parents=True)
    _wordpiece(src)
    torch.manual_seed(0)
    cfg = ModernBertConfig(
        vocab_size=_vocab_size(src),
        hidden_size=768,
        num_hidden_layers=22,
        num_attention_heads=12,
        intermediate_size=1152,
        max_position_embeddings=8192,
        global_attn_every_n_layers=3,
        local_attention=128,
        pad_token_id=0,
        cls_token_id=101,
        sep_token_id=102,
        bos_token_id=101,
        eos_token_id=102,
    )
    ModernBertModel(cfg).save_pretrained(src)
    modules = [Transformer(str(src), max_seq_length=8192), Pooling(768, "mean")]
    SentenceTransformer(modules=modules).save(str(dest / "st"))
    return dest / "st"


def parity_texts() -> list[str]:
    import gzip
    import json

    from tests.corpus import varied_texts
    from tests.helpers import REPO

    docs = REPO / "samples" / "docs"
    lines = (docs / "articles.jsonl").read_text().split("\n")  # not splitlines: texts hold U+2028
    lines += gzip.open(docs / "more-articles.jsonl.gz", "rt").read().split("\n")
    articles = []
    for line in lines:
        try:  # the samples hold a few broken records on purpose (the ingest tests read them)
            articles.append(json.loads(line, strict=False)["text"])
        except (ValueError, KeyError, TypeError):
            continue
    return articles + varied_texts(200, seed=27)


def encode_all(texts: list[str], dtype: str):
    """Every chunk's vector (float32 array [chunks, dim]) through the runtime, CPU devices."""
    import numpy as np

    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.encode.packing import Packer, PackSpec
    from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings
    from docbeam.pipeline.ingest.chunking import Windowing, chunk_documents

    spec = PackSpec(rows=16, seq_len=256)
    runtime = EncoderRuntime(EncoderSettings(None, None, "auto", dtype, spec))
    ckpt = runtime.checkpoint
    docs = [Document(uid=str(i), doc_id=str(i), source="t", row=i, text=t) for i, t in enumerate(texts)]
    packer, batches = Packer(spec), []
    for _, segs in chunk_documents(docs, ckpt.tokenizer, ckpt.special, Windowing(256, 32)):
        for seg in segs:
            batches += packer.add(seg)
    batches += list(packer.flush())
    vectors, _, _ = runtime.encode(batches)
    out = {}
    for b, v in zip(batches, vectors):
        for row, sid, seg in b.slots:
            out[(int(seg.uid), seg.index)] = v[row, sid - 1]
    return np.stack([out[k] for k in sorted(out)])


def parity(save: str | None, same_as: str | None) -> int:
    import numpy as np

    texts = parity_texts()
    f32 = encode_all(texts, "float32")
    bf16 = encode_all(texts, "bfloat16")
    cos = (f32 * bf16).sum(-1) / np.linalg.norm(f32, axis=-1) / np.linalg.norm(bf16, axis=-1)
    print(
        f"bfloat16 vs float32, default model, {len(texts)} texts, {len(cos)} chunks: "
        f"min cosine {cos.min():.7f}, median {np.median(cos):.7f}, {(cos < 0.9999).sum()} below 0.9999"
    )
    if save:
        np.savez(save, float32=f32)
    if same_as:
        before = np.load(same_as)["float32"]
        print(f"float32 vectors bit-for-bit those of {same_as}: {bool(np.array_equal(before, f32))}")
    return 0 if cos.min() >= 0.9999 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modernbert", action="store_true", help="ModernBERT-base-sized at 8,192 tokens on v5e")
    parser.add_argument("--hardware", nargs="*", default=None, help="TPU workers (default: see above)")
    parser.add_argument("--parity", action="store_true", help="bfloat16 vs float32 vectors on real texts, this CPU")
    parser.add_argument("--save", help="with --parity: keep the float32 vectors in this .npz")
    parser.add_argument("--same-as", help="with --parity: compare the float32 vectors with this .npz")
    args = parser.parse_args()
    if args.parity:
        return parity(args.save, args.same_as)
    from docbeam.pipeline import cli

    worst = 0
    if args.modernbert:
        with tempfile.TemporaryDirectory() as tmp:
            model = modernbert_base(Path(tmp))
            for hw in args.hardware or ["tpu-v5e:4"]:
                flags = ["--hardware", hw, "--model", str(model), "--max-seq-len", "8192"]
                worst = max(worst, cli.main(["compile", *flags]))
    else:
        for hw in args.hardware or ["tpu-v5e:4", "tpu-v6e:4", "tpu-v5p:4"]:
            worst = max(worst, cli.main(["compile", "--hardware", hw]))
    return worst


if __name__ == "__main__":
    sys.exit(main())
