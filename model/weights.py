"""model.safetensors -> parameter pytree. safetensors only: weights are never unpickled.

The encoder's tensors go to its architecture module; Dense modules (2_Dense/...) come
from their own model.safetensors."""

from pathlib import Path

import numpy as np
from safetensors import SafetensorError
from safetensors.numpy import load_file

from docbeam.model.architectures import architecture
from docbeam.model.config import EncoderConfig
from docbeam.model.errors import CheckpointError

Params = dict


def _strip_prefix(tensors: dict[str, np.ndarray], prefixes: tuple[str, ...]) -> dict[str, np.ndarray]:
    # Task-head checkpoints (BertForX, XLMRobertaForX, ModernBertForX) prefix the encoder's names.
    if any(k.startswith("embeddings.") for k in tensors):
        return tensors
    for prefix in prefixes:
        if any(k.startswith(prefix + "embeddings.") for k in tensors):
            return {k.removeprefix(prefix): v for k, v in tensors.items()}
    return tensors


def _read(file: Path) -> dict[str, np.ndarray]:
    if not file.exists():
        raise CheckpointError(f"{file.parent}: no {file.name} (docbeam never loads pickled weights)")
    try:
        return load_file(str(file))
    except SafetensorError as exc:
        raise CheckpointError(f"{file}: not a readable safetensors file: {exc}") from exc


def _dense_params(path: Path, cfg: EncoderConfig) -> list[dict]:
    out = []
    for d in cfg.head.dense:
        t = _read(path / d.path / "model.safetensors")
        try:
            w = t["linear.weight"]
            p = {"w": np.ascontiguousarray(w.T)}
            if d.bias:
                p["b"] = t["linear.bias"]
        except KeyError as exc:
            raise CheckpointError(f"{path / d.path}/model.safetensors: missing tensor {exc}") from exc
        if w.shape != (d.out_features, d.in_features):
            raise CheckpointError(f"{path / d.path}: weight {w.shape}, config says {(d.out_features, d.in_features)}")
        out.append(p)
    return out


def params_from_tensors(tensors: dict[str, np.ndarray], cfg: EncoderConfig) -> Params:
    arch = architecture(cfg.arch)
    return arch.params_from_tensors(_strip_prefix(tensors, arch.PREFIXES), cfg)


def load_params(path: Path, cfg: EncoderConfig) -> Params:
    file = Path(path) / "model.safetensors"
    tensors = _read(file)
    try:
        params = params_from_tensors(tensors, cfg)
    except KeyError as exc:
        raise CheckpointError(f"{file}: missing tensor {exc}; expected a {cfg.arch} encoder layout") from exc
    want = (cfg.vocab_size, cfg.hidden)
    if params["embeddings"]["word"].shape != want:
        raise CheckpointError(f"{file}: word embeddings {params['embeddings']['word'].shape}, config says {want}")
    params["dense"] = _dense_params(Path(path), cfg)
    return params
