"""Encoder hyper-parameters: one dataclass for every architecture (each reads its own
config.json fields in its module: bert, xlm_roberta, modernbert)."""

from dataclasses import dataclass, field

from docbeam.model.errors import CheckpointError
from docbeam.model.sentence import Head

__all__ = ["CheckpointError", "EncoderConfig"]


@dataclass(frozen=True)
class EncoderConfig:
    arch: str  # config.json's model_type
    vocab_size: int
    hidden: int
    layers: int
    heads: int
    intermediate: int
    max_positions: int  # positions a window may use (XLM-R: max_position_embeddings - offset)
    layer_norm_eps: float
    max_seq_len: int  # window the model was trained to embed (sentence-transformers' max_seq_length)
    type_vocab_size: int = 2
    activation: str = "gelu"  # a model.layers.ACTIVATIONS name
    position_offset: int = 0  # XLM-R: positions start after the padding index
    rope_theta: float = 0.0  # ModernBERT: rotary base of global layers
    rope_theta_local: float = 0.0  # ... and of local layers
    layer_windows: tuple[int | None, ...] = ()  # per layer: None (global) or tokens either side
    head: Head = field(default_factory=Head)

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def normalize(self) -> bool:
        return self.head.normalize

    @property
    def windows(self) -> tuple[int | None, ...]:
        """The distinct attention windows of the layers (None = global), global first."""
        return tuple(dict.fromkeys([None, *self.layer_windows])) if self.layer_windows else (None,)

    def window_of(self, layer: int) -> int | None:
        return self.layer_windows[layer] if self.layer_windows else None

    @property
    def embedding_dim(self) -> int:
        """Width of the sentence vector: pooling modes x hidden, or the last Dense layer's."""
        return self.head.dense[-1].out_features if self.head.dense else len(self.head.pooling) * self.hidden


def shape_fields(raw: dict) -> dict:
    """The sizes every architecture's config.json names alike (Hugging Face's keys -> EncoderConfig's)."""
    return {
        "vocab_size": raw["vocab_size"],
        "hidden": raw["hidden_size"],
        "layers": raw["num_hidden_layers"],
        "heads": raw["num_attention_heads"],
        "intermediate": raw["intermediate_size"],
    }
