"""ModernBERT: rotary positions, pre-norm layers without biases, GeGLU, and attention that
alternates between global layers and a sliding local window (read top to bottom).

- Layer i is global when i % global_attn_every_n_layers == 0 (or as `layer_types` says),
  otherwise local: a token sees its segment's tokens at most local_attention // 2 away
  (HF's bidirectional sliding window, distance <= half-window), through the kernel
  contract's `window`.
- Rotary bases differ: global layers use global_rope_theta (160,000), local ones
  local_rope_theta (10,000). Positions restart at 0 in each packed segment.
- Layer 0 has no attention norm (the embedding norm precedes it); a final norm follows
  the last layer. Norms and linears have no bias unless norm_bias / attention_bias /
  mlp_bias say so.
"""

import jax
import jax.numpy as jnp
import numpy as np

from docbeam.model.config import EncoderConfig, shape_fields
from docbeam.model.errors import CheckpointError
from docbeam.model.layers import activation, dense, layer_norm, rope

# One line for `docbeam models` (the docstring above is for readers of this code).
SUMMARY = (
    "ModernBERT: rotary positions, pre-norm layers without biases, GeGLU, global layers alternating with a "
    "sliding local window"
)
MODEL_TYPES = ("modernbert",)
PREFIXES = ("model.",)  # ModernBertForX checkpoints


def _layer_types(raw: dict, where: str) -> list[str]:
    types = raw.get("layer_types")
    if types is None:
        every = int(raw.get("global_attn_every_n_layers", 3))
        return ["sliding_attention" if i % every else "full_attention" for i in range(raw["num_hidden_layers"])]
    bad = sorted(set(types) - {"full_attention", "sliding_attention"})
    if bad or len(types) != raw["num_hidden_layers"]:
        raise CheckpointError(f"{where}: layer_types {types} (need one of full/sliding_attention per layer)")
    return list(types)


def _rope_theta(raw: dict, kind: str, legacy: str, default: float, where: str) -> float:
    params = (raw.get("rope_parameters") or {}).get(kind) or {}
    if params.get("rope_type", "default") != "default":
        raise CheckpointError(f"{where}: rope_type {params['rope_type']!r} for {kind}; docbeam implements 'default'")
    return float(params.get("rope_theta", raw.get(legacy, default)))


def config_fields(raw: dict, where: str) -> dict:
    act = raw.get("hidden_activation", "gelu")
    activation(act, where)
    window = int(raw.get("local_attention", 128)) // 2
    if "sliding_window" in raw and "local_attention" not in raw:
        window = int(raw["sliding_window"])
    types = _layer_types(raw, where)
    return {
        **shape_fields(raw),
        "max_positions": raw.get("max_position_embeddings", 8192),
        "layer_norm_eps": raw.get("norm_eps", 1e-5),
        "activation": act,
        "rope_theta": _rope_theta(raw, "full_attention", "global_rope_theta", 160_000.0, where),
        "rope_theta_local": _rope_theta(raw, "sliding_attention", "local_rope_theta", 10_000.0, where),
        "layer_windows": tuple(window if t == "sliding_attention" else None for t in types),
    }


def _ln(t: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    p = {"scale": t[f"{prefix}.weight"]}
    if f"{prefix}.bias" in t:
        p["bias"] = t[f"{prefix}.bias"]
    return p


def _dense(t: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    p = {"w": np.ascontiguousarray(t[f"{prefix}.weight"].T)}
    if f"{prefix}.bias" in t:
        p["b"] = t[f"{prefix}.bias"]
    return p


def params_from_tensors(t: dict[str, np.ndarray], cfg: EncoderConfig) -> dict:
    layers = []
    for i in range(cfg.layers):
        p = f"layers.{i}"
        layer = {
            "qkv": _dense(t, f"{p}.attn.Wqkv"),
            "attn_out": _dense(t, f"{p}.attn.Wo"),
            "mlp_ln": _ln(t, f"{p}.mlp_norm"),
            "mlp_in": _dense(t, f"{p}.mlp.Wi"),
            "mlp_out": _dense(t, f"{p}.mlp.Wo"),
        }
        if i > 0:  # layer 0's attention norm is the identity
            layer["attn_ln"] = _ln(t, f"{p}.attn_norm")
        layers.append(layer)
    return {
        "embeddings": {"word": t["embeddings.tok_embeddings.weight"], "ln": _ln(t, "embeddings.norm")},
        "layers": layers,
        "final_ln": _ln(t, "final_norm"),
    }


def _block(x, p: dict, segment_ids, positions, cfg: EncoderConfig, window: int | None, attend) -> jax.Array:
    b, t, _ = x.shape
    h = layer_norm(x, p["attn_ln"], cfg.layer_norm_eps) if "attn_ln" in p else x
    q, k, v = (y.reshape(b, t, cfg.heads, cfg.head_dim) for y in jnp.split(dense(h, p["qkv"]), 3, axis=-1))
    theta = cfg.rope_theta if window is None else cfg.rope_theta_local
    low = p["qkv"]["w"].dtype  # attention runs in the compute dtype; the residual stays float32
    q, k, v = rope(q, positions, theta).astype(low), rope(k, positions, theta).astype(low), v.astype(low)
    ctx = attend(q, k, v, segment_ids=segment_ids, window=window).reshape(b, t, cfg.hidden)
    x = x + dense(ctx, p["attn_out"])
    # No optimization barrier after the GeGLU, unlike bert.py's GELU: its TPU bytes were not
    # measured with one (the long-context compile takes most of an hour on two cores).
    gate_in, gate = jnp.split(dense(layer_norm(x, p["mlp_ln"], cfg.layer_norm_eps), p["mlp_in"]), 2, axis=-1)
    return x + dense(activation(cfg.activation, cfg.arch)(gate_in) * gate, p["mlp_out"])


def encode(params: dict, cfg: EncoderConfig, tokens, segment_ids, positions, *, attend) -> jax.Array:
    """[B, T] token ids -> [B, T, hidden] final hidden states (after the final norm)."""
    e = params["embeddings"]
    x = layer_norm(e["word"][tokens], e["ln"], cfg.layer_norm_eps)
    for i, layer in enumerate(params["layers"]):
        with jax.named_scope(f"layer_{i}" if cfg.window_of(i) is None else f"layer_{i}_local"):
            x = _block(x, layer, segment_ids, positions, cfg, cfg.window_of(i), attend)
    return layer_norm(x, params["final_ln"], cfg.layer_norm_eps)
