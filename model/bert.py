"""BERT: learned absolute positions, post-norm layers, exact GELU (read top to bottom).

Inputs are packed rows: several segments (windows of different documents) may share a
row, told apart by `segment_ids` (0 = padding); positions restart at 0 in each segment.
"""

import jax
import jax.numpy as jnp
import numpy as np

from docbeam.model.config import EncoderConfig, shape_fields
from docbeam.model.layers import activation, dense, layer_norm

# One line for `docbeam models` (the docstring above is for readers of this code).
SUMMARY = "BERT: learned absolute positions, post-norm layers, exact GELU"
MODEL_TYPES = ("bert",)
PREFIXES = ("bert.",)  # BertForX checkpoints prefix the encoder; the bare BertModel does not


def config_fields(raw: dict, where: str) -> dict:
    act = raw.get("hidden_act", "gelu")
    activation(act, where)
    return {
        **shape_fields(raw),
        "max_positions": raw["max_position_embeddings"],
        "type_vocab_size": raw.get("type_vocab_size", 2),
        "layer_norm_eps": raw.get("layer_norm_eps", 1e-12),
        "activation": act,
    }


def _ln(t: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {"scale": t[f"{prefix}.weight"], "bias": t[f"{prefix}.bias"]}


def _dense(t: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    # torch Linear stores [out, in]; we multiply x @ w with w [in, out].
    return {"w": np.ascontiguousarray(t[f"{prefix}.weight"].T), "b": t[f"{prefix}.bias"]}


def params_from_tensors(t: dict[str, np.ndarray], cfg: EncoderConfig) -> dict:
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


def _block(x: jax.Array, p: dict, segment_ids: jax.Array, cfg: EncoderConfig, attend) -> jax.Array:
    b, t, _ = x.shape
    low = p["qkv"]["w"].dtype  # attention runs in the compute dtype; the residual stays float32
    q, k, v = jnp.split(dense(x, p["qkv"]), 3, axis=-1)
    heads = [y.astype(low).reshape(b, t, cfg.heads, cfg.head_dim) for y in (q, k, v)]
    ctx = attend(*heads, segment_ids=segment_ids).reshape(b, t, cfg.hidden)
    x = layer_norm(x + dense(ctx, p["attn_out"]), p["attn_ln"], cfg.layer_norm_eps)
    # The activation is computed where the in-projection is, and leaves in the compute dtype
    # (`dense` casts it so anyway): the barrier keeps XLA (TPU) from writing the float32
    # pre-activation, [tokens, intermediate], and computing exact GELU in the next matmul's
    # fusion instead. A no-op for the numbers.
    pre = dense(x, p["ffn_in"])
    h = jax.lax.optimization_barrier(activation(cfg.activation, cfg.arch)(pre).astype(p["ffn_out"]["w"].dtype))
    return layer_norm(x + dense(h, p["ffn_out"]), p["ffn_ln"], cfg.layer_norm_eps)


def encode(params: dict, cfg: EncoderConfig, tokens, segment_ids, positions, *, attend) -> jax.Array:
    """[B, T] token ids -> [B, T, hidden] final hidden states."""
    e = params["embeddings"]
    x = e["word"][tokens].astype(jnp.float32) + e["position"][positions + cfg.position_offset] + e["type"][0]
    x = layer_norm(x, e["ln"], cfg.layer_norm_eps)
    for i, layer in enumerate(params["layers"]):
        with jax.named_scope(f"layer_{i}"):
            x = _block(x, layer, segment_ids, cfg, attend)
    return x
