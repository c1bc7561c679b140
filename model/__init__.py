"""The encoder as pure JAX functions over a parameter pytree (no Beam, no framework).

checkpoint     find and read a checkpoint directory (config, weights, tokenizer, modules)
architectures  config.json's model_type -> bert | xlm_roberta | modernbert
bert, xlm_roberta, modernbert   one module per architecture: config fields, weights, forward
layers         layer norm, dense, activations, rotary positions (shared)
config         EncoderConfig: one dataclass for every architecture
sentence       sentence-transformers modules: Pooling, Dense, Normalize (modules.json)
prompts        config_sentence_transformers.json prompts and their token ids
encoder        the one entry point: packed rows -> pooled, projected, normalised vectors
pooling        every sentence-transformers pooling mode over packed segments
weights        model.safetensors -> parameter pytree (never unpickles)
tokenizer      tokenizer.json with padding/truncation off; special tokens from its post-processor
"""

from docbeam.model.architectures import ARCHITECTURES
from docbeam.model.checkpoint import Checkpoint, default_checkpoint_dir, load_checkpoint, read_config
from docbeam.model.config import EncoderConfig
from docbeam.model.encoder import embed_segments, encode, flops_per_token
from docbeam.model.sentence import POOLING_MODES

__all__ = [
    "ARCHITECTURES",
    "Checkpoint",
    "EncoderConfig",
    "POOLING_MODES",
    "default_checkpoint_dir",
    "embed_segments",
    "encode",
    "flops_per_token",
    "load_checkpoint",
    "read_config",
]
