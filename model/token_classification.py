"""Token classification (named entities): BertForTokenClassification and
XLMRobertaForTokenClassification checkpoints.

The head is one linear layer over the encoder's last hidden states, token by token
(`classifier.weight` [labels, hidden], `classifier.bias`); dropout is off at inference.
Its labels are config.json's `id2label`, BIO / IOB2 tags such as O, B-PER, I-PER. The
encoder's tensors carry the task head's `bert.` / `roberta.` prefix, which model.weights
strips; the classifier is read here on its own.
"""

import json
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from safetensors import SafetensorError, safe_open

from docbeam.model.config import EncoderConfig
from docbeam.model.encoder import encode
from docbeam.model.errors import CheckpointError
from docbeam.model.weights import Params

# ModernBertForTokenClassification puts a dense + norm head before its classifier: not read.
ARCHITECTURES = ("bert", "xlm-roberta", "roberta")
WEIGHTS = ("classifier.weight", "classifier.bias")


def read_labels(path: Path) -> tuple[str, ...]:
    """id2label as a tuple indexed by label id; CheckpointError unless it is a token
    classifier of a supported architecture with at least one B-/I- tag."""
    file = Path(path) / "config.json"
    try:
        raw = json.loads(file.read_text())
    except FileNotFoundError as exc:
        raise CheckpointError(f"{path}: no config.json") from exc
    arch = raw.get("model_type", "bert")
    if arch not in ARCHITECTURES:
        raise CheckpointError(
            f"{file}: model_type {arch!r}; docbeam reads token classifiers of {', '.join(ARCHITECTURES)}"
        )
    id2label = raw.get("id2label") or {}
    try:
        labels = tuple(str(id2label[k]) for k in sorted(id2label, key=int))
    except ValueError:
        raise CheckpointError(f"{file}: id2label keys must be label ids 0..n-1") from None
    if sorted(map(int, id2label)) != list(range(len(labels))):
        raise CheckpointError(f"{file}: id2label keys must be label ids 0..n-1, got {sorted(id2label, key=int)}")
    if not any(label.startswith(("B-", "I-")) for label in labels):
        raise CheckpointError(
            f"{file}: id2label {list(labels)[:6]} has no B-/I- tags: not a named-entity (BIO) checkpoint"
        )
    return labels


def load_classifier(path: Path, n_labels: int, hidden: int) -> Params:
    """The classifier layer as {"w": [hidden, labels], "b": [labels]} (x @ w + b)."""
    file = Path(path) / "model.safetensors"
    try:
        with safe_open(str(file), framework="numpy") as f:
            missing = [k for k in WEIGHTS if k not in f.keys()]
            if missing:
                raise CheckpointError(f"{file}: no {', '.join(missing)}: not a *ForTokenClassification checkpoint")
            w, b = (f.get_tensor(k) for k in WEIGHTS)
    except (SafetensorError, FileNotFoundError) as exc:
        raise CheckpointError(f"{file}: not a readable safetensors file: {exc}") from exc
    if w.shape != (n_labels, hidden) or b.shape != (n_labels,):
        raise CheckpointError(
            f"{file}: classifier {w.shape} + {b.shape}, config says {n_labels} labels over {hidden} hidden units"
        )
    return {"w": np.ascontiguousarray(w.T), "b": b}


def token_scores(params: Params, cfg: EncoderConfig, tokens, segment_ids, positions, *, attend) -> jax.Array:
    """[B, T] packed rows -> [B, T, labels] float32 label probabilities per token (the
    softmax the transformers token-classification pipeline takes of the logits)."""
    hidden = encode(params, cfg, tokens, segment_ids, positions, attend=attend)
    with jax.named_scope("token_classifier"):
        head = params["classifier"]
        logits = hidden.astype(jnp.float32) @ head["w"].astype(jnp.float32) + head["b"]
        return jax.nn.softmax(logits, axis=-1)
