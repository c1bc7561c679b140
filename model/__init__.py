"""The encoder as pure JAX functions over a parameter pytree (no Beam, no framework).

checkpoint  find and read a BERT-family checkpoint directory (config, weights, tokenizer)
config      EncoderConfig from config.json + sentence-transformers settings
weights     model.safetensors -> parameter pytree (never unpickles)
encoder     forward pass; attention through `kernels`
pooling     per-segment mean pooling and L2 normalisation
tokenizer   tokenizer.json with the checkpoint's padding/truncation traps removed
"""

from model.checkpoint import Checkpoint, default_checkpoint_dir, load_checkpoint
from model.config import EncoderConfig
from model.encoder import embed_segments, encode, flops_per_token

__all__ = [
    "Checkpoint",
    "EncoderConfig",
    "default_checkpoint_dir",
    "embed_segments",
    "encode",
    "flops_per_token",
    "load_checkpoint",
]
