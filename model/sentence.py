"""The sentence-transformers modules after the transformer, read from the checkpoint.

modules.json lists them in order: the Transformer, then Pooling, optional Dense layers,
optional Normalize. Without modules.json (a bare transformers checkpoint), docbeam uses
what sentence-transformers would: mean pooling, no Dense, no Normalize. Anything else in
modules.json (a Router, a CNN, a LayerNorm module...) is refused, by name.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from docbeam.model.errors import CheckpointError
from docbeam.model.prompts import Prompts

# Pooling modes in sentence-transformers' order (legacy `pooling_mode_*` keys concatenate in it).
POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")
_LEGACY_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
# Dense activation (a torch class path in 2_Dense/config.json) -> docbeam's name.
DENSE_ACTIVATIONS = {"Tanh": "tanh", "Identity": "identity", "ReLU": "relu", "GELU": "gelu", "Sigmoid": "sigmoid"}


@dataclass(frozen=True)
class DenseSpec:
    path: str  # the module's folder in the checkpoint, e.g. "2_Dense"
    in_features: int
    out_features: int
    bias: bool
    activation: str  # a DENSE_ACTIVATIONS value


@dataclass(frozen=True)
class Head:
    """What turns token states into the checkpoint's sentence vector."""

    pooling: tuple[str, ...] = ("mean",)
    include_prompt: bool = True
    dense: tuple[DenseSpec, ...] = ()
    normalize: bool = False
    prompts: Prompts = field(default_factory=Prompts)


def _module_type(m: dict) -> str:
    return m.get("type", "").rsplit(".", 1)[-1]


def read_pooling(file: Path) -> tuple[tuple[str, ...], bool]:
    raw = json.loads(file.read_text())
    mode = raw.get("pooling_mode")
    if mode is None:
        modes = tuple(m for key, m in _LEGACY_KEYS.items() if raw.get(key)) or ("mean",)
    else:
        modes = (mode,) if isinstance(mode, str) else tuple(mode)
    bad = [m for m in modes if m not in POOLING_MODES]
    if bad:
        raise CheckpointError(f"{file}: pooling mode(s) {bad} unknown; docbeam has {', '.join(POOLING_MODES)}")
    return modes, bool(raw.get("include_prompt", True))


def read_dense(path: Path, folder: str) -> DenseSpec:
    file = path / folder / "config.json"
    try:
        raw = json.loads(file.read_text())
    except FileNotFoundError as exc:
        raise CheckpointError(f"{file}: missing (modules.json lists a Dense module at {folder!r})") from exc
    act = str(raw.get("activation_function", "torch.nn.modules.activation.Tanh")).rsplit(".", 1)[-1]
    if act not in DENSE_ACTIVATIONS:
        raise CheckpointError(f"{file}: activation {act!r} not supported; docbeam has {', '.join(DENSE_ACTIVATIONS)}")
    if raw.get("use_residual") or raw.get("module_input_name", "sentence_embedding") != "sentence_embedding":
        raise CheckpointError(f"{file}: docbeam applies Dense to the sentence embedding only, without a residual")
    return DenseSpec(
        folder, int(raw["in_features"]), int(raw["out_features"]), bool(raw.get("bias", True)), DENSE_ACTIVATIONS[act]
    )


def read_head(path: Path, hidden: int) -> Head:
    path = Path(path)
    prompts = Prompts.from_dir(path)
    modules_file = path / "modules.json"
    if not modules_file.exists():
        return Head(prompts=prompts)
    modules = json.loads(modules_file.read_text())
    kinds = [_module_type(m) for m in modules]
    if not kinds or kinds[0] != "Transformer":
        raise CheckpointError(f"{modules_file}: the first module must be a Transformer, got {kinds[:1]}")
    pooling: tuple[str, ...] = ("mean",)
    include_prompt, dense, normalize = True, [], False
    for m, kind in zip(modules[1:], kinds[1:]):
        if normalize:
            raise CheckpointError(f"{modules_file}: {kind} after Normalize is not supported")
        if kind == "Pooling":
            if kinds.index("Pooling") != 1 or kinds.count("Pooling") > 1:
                raise CheckpointError(f"{modules_file}: Pooling must come right after the Transformer")
            file = path / m.get("path", "1_Pooling") / "config.json"
            if file.exists():
                pooling, include_prompt = read_pooling(file)
        elif kind == "Dense":
            dense.append(read_dense(path, m["path"]))
        elif kind == "Normalize":
            normalize = True
        else:
            raise CheckpointError(
                f"{modules_file}: module {kind!r} is not supported; "
                "docbeam reads Transformer, Pooling, Dense, Normalize"
            )
    width = len(pooling) * hidden
    for d in dense:
        if d.in_features != width:
            raise CheckpointError(
                f"{path / d.path}/config.json: in_features {d.in_features}, but its input has {width}"
            )
        width = d.out_features
    return Head(tuple(pooling), include_prompt, tuple(dense), normalize, prompts)
