"""The README's compiled-bounds table: `docbeam compile` for TPU workers, on this machine.

    python -m tests.benchmarks.tpu_compile                 # the default model on v5e, v6e, v5p (4 chips)
    python -m tests.benchmarks.tpu_compile --modernbert    # a ModernBERT-base-sized random model at 8,192

The ModernBERT check builds random weights of ModernBERT-base's shape (22 layers, 768 wide,
12 heads, local window 128 on two of every three layers) with transformers, then compiles every
batch shape a v5e worker would build at --max-seq-len 8192. Compiled bounds, not measurements.
Needs the test and tpu extras (torch, transformers, libtpu); minutes per TPU type on 2 cores.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modernbert", action="store_true", help="ModernBERT-base-sized at 8,192 tokens on v5e")
    parser.add_argument("--hardware", nargs="*", default=None, help="TPU workers (default: see above)")
    args = parser.parse_args()
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
