"""model.safetensors -> parameter pytree. safetensors only: weights are never unpickled."""

from pathlib import Path

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file

from model.config import CheckpointError, EncoderConfig

Params = dict


def _strip_prefix(tensors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    # BertForX checkpoints prefix the encoder with "bert."; the bare BertModel does not.
    if not any(k.startswith("embeddings.") for k in tensors):
        tensors = {k.removeprefix("bert."): v for k, v in tensors.items()}
    return tensors


def _ln(t: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {"scale": t[f"{prefix}.weight"], "bias": t[f"{prefix}.bias"]}


def _dense(t: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    # torch Linear stores [out, in]; we multiply x @ w with w [in, out].
    return {"w": np.ascontiguousarray(t[f"{prefix}.weight"].T), "b": t[f"{prefix}.bias"]}


def params_from_tensors(tensors: dict[str, np.ndarray], cfg: EncoderConfig) -> Params:
    t = _strip_prefix(tensors)
    layers = []
    for i in range(cfg.layers):
        p = f"encoder.layer.{i}"
        q, k, v = (_dense(t, f"{p}.attention.self.{n}") for n in ("query", "key", "value"))
        layers.append(
            {
                # One [hidden, 3*hidden] matmul instead of three narrow ones.
                "qkv": {
                    "w": np.concatenate([q["w"], k["w"], v["w"]], axis=1),
                    "b": np.concatenate([q["b"], k["b"], v["b"]]),
                },
                "attn_out": _dense(t, f"{p}.attention.output.dense"),
                "attn_ln": _ln(t, f"{p}.attention.output.LayerNorm"),
                "ffn_in": _dense(t, f"{p}.intermediate.dense"),
                "ffn_out": _dense(t, f"{p}.output.dense"),
                "ffn_ln": _ln(t, f"{p}.output.LayerNorm"),
            }
        )
    return {
        "embeddings": {
            "word": t["embeddings.word_embeddings.weight"],
            "position": t["embeddings.position_embeddings.weight"],
            "type": t["embeddings.token_type_embeddings.weight"],
            "ln": _ln(t, "embeddings.LayerNorm"),
        },
        "layers": layers,
    }


def load_params(path: Path, cfg: EncoderConfig) -> Params:
    file = Path(path) / "model.safetensors"
    if not file.exists():
        raise CheckpointError(f"{path}: no model.safetensors (docbeam never loads pickled weights)")
    try:
        tensors = load_file(str(file))
    except SafetensorError as exc:
        raise CheckpointError(f"{file}: not a readable safetensors file: {exc}") from exc
    try:
        params = params_from_tensors(tensors, cfg)
    except KeyError as exc:
        raise CheckpointError(f"{file}: missing tensor {exc}; expected a BERT encoder layout") from exc
    want = (cfg.vocab_size, cfg.hidden)
    if params["embeddings"]["word"].shape != want:
        raise CheckpointError(f"{file}: word embeddings {params['embeddings']['word'].shape}, config says {want}")
    return params
