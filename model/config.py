"""Encoder hyper-parameters, read from a checkpoint directory."""

import json
from dataclasses import dataclass
from pathlib import Path

SUPPORTED_MODEL_TYPES = ("bert",)


class CheckpointError(ValueError):
    """A checkpoint directory is missing a file or holds something docbeam cannot use."""


@dataclass(frozen=True)
class EncoderConfig:
    vocab_size: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    max_seq_len: int  # window the model was trained to embed (sentence-transformers' max_seq_length)
    normalize: bool = True

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @classmethod
    def from_dir(cls, path: Path) -> "EncoderConfig":
        path = Path(path)
        try:
            raw = json.loads((path / "config.json").read_text())
        except FileNotFoundError as exc:
            raise CheckpointError(
                f"{path}: no config.json (need config.json, model.safetensors, tokenizer.json)"
            ) from exc
        model_type = raw.get("model_type", "bert")
        if model_type not in SUPPORTED_MODEL_TYPES:
            raise CheckpointError(
                f"{path}/config.json: model_type {model_type!r} is not supported; "
                f"docbeam reads {', '.join(SUPPORTED_MODEL_TYPES)}"
            )
        if raw.get("hidden_act", "gelu") != "gelu":
            raise CheckpointError(
                f"{path}/config.json: hidden_act {raw.get('hidden_act')!r}; docbeam's BERT uses exact GELU ('gelu')"
            )
        st = path / "sentence_bert_config.json"
        max_seq = json.loads(st.read_text()).get("max_seq_length") if st.exists() else None
        max_seq = int(max_seq or min(512, raw["max_position_embeddings"]))
        normalize = True
        pool_cfg = path / "1_Pooling" / "config.json"
        if pool_cfg.exists():
            p = json.loads(pool_cfg.read_text())
            modes = [
                m
                for m in ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens")
                if p.get(f"pooling_mode_{m}")
            ]
            if modes != ["mean_tokens"]:
                raise CheckpointError(f"{pool_cfg}: pooling {modes}; docbeam implements mean pooling only")
        modules = path / "modules.json"
        if modules.exists():
            normalize = any(m.get("type", "").endswith("Normalize") for m in json.loads(modules.read_text()))
        cfg = cls(
            vocab_size=raw["vocab_size"],
            hidden=raw["hidden_size"],
            layers=raw["num_hidden_layers"],
            heads=raw["num_attention_heads"],
            intermediate=raw["intermediate_size"],
            max_positions=raw["max_position_embeddings"],
            type_vocab_size=raw.get("type_vocab_size", 2),
            layer_norm_eps=raw.get("layer_norm_eps", 1e-12),
            max_seq_len=max_seq,
            normalize=normalize,
        )
        if cfg.hidden % cfg.heads:
            raise CheckpointError(f"{path}/config.json: hidden_size {cfg.hidden} not divisible by {cfg.heads} heads")
        return cfg
