"""A tiny BERT checkpoint written with numpy alone (random weights, the real tokenizer), for
tests of the checkpoint reader's refusal paths. Parity tests use transformers-built ones."""

import json
import shutil
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from docbeam.model.checkpoint import default_checkpoint_dir

HIDDEN, HEADS, FFN, LAYERS, POSITIONS = 8, 2, 16, 1, 64


def bert_tensors(vocab: int, prefix: str = "", seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32) * 0.1

    t = {
        "embeddings.word_embeddings.weight": r(vocab, HIDDEN),
        "embeddings.position_embeddings.weight": r(POSITIONS, HIDDEN),
        "embeddings.token_type_embeddings.weight": r(2, HIDDEN),
        "embeddings.LayerNorm.weight": 1 + r(HIDDEN),
        "embeddings.LayerNorm.bias": r(HIDDEN),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}"
        for name, (out, inp) in {
            "attention.self.query": (HIDDEN, HIDDEN),
            "attention.self.key": (HIDDEN, HIDDEN),
            "attention.self.value": (HIDDEN, HIDDEN),
            "attention.output.dense": (HIDDEN, HIDDEN),
            "intermediate.dense": (FFN, HIDDEN),
            "output.dense": (HIDDEN, FFN),
        }.items():
            t[f"{p}.{name}.weight"], t[f"{p}.{name}.bias"] = r(out, inp), r(out)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            t[f"{p}.{ln}.weight"], t[f"{p}.{ln}.bias"] = 1 + r(HIDDEN), r(HIDDEN)
    return {prefix + k: v for k, v in t.items()}


def write_tiny_bert(
    path: Path,
    *,
    prefix: str = "",
    config: dict | None = None,
    pooling: dict | None = None,
    modules: list[tuple[str, str]] | None = None,
) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    shutil.copy(default_checkpoint_dir() / "tokenizer.json", path / "tokenizer.json")
    vocab = json.loads((path / "tokenizer.json").read_text())["model"]["vocab"]
    cfg = {
        "model_type": "bert",
        "vocab_size": len(vocab),
        "hidden_size": HIDDEN,
        "num_hidden_layers": LAYERS,
        "num_attention_heads": HEADS,
        "intermediate_size": FFN,
        "max_position_embeddings": POSITIONS,
        "type_vocab_size": 2,
        "hidden_act": "gelu",
        **(config or {}),
    }
    (path / "config.json").write_text(json.dumps(cfg))
    if pooling is not None:
        (path / "1_Pooling").mkdir(exist_ok=True)
        (path / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": HIDDEN, **pooling}))
        modules = [("Transformer", ""), ("Pooling", "1_Pooling"), *(modules or [])]
        (path / "modules.json").write_text(
            json.dumps(
                [
                    {"idx": i, "name": str(i), "path": p, "type": f"sentence_transformers.models.{t}"}
                    for i, (t, p) in enumerate(modules)
                ]
            )
        )
    save_file(bert_tensors(len(vocab), prefix), str(path / "model.safetensors"))
    return path
