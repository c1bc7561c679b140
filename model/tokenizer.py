"""The checkpoint's own tokenizer.json, made safe for windowed embedding.

Trap: all-MiniLM-L6-v2's tokenizer.json pads to 128 and truncates at 128. Loaded as-is,
short texts get padding averaged into the mean and long ones lose everything past 128
(cosine to sentence-transformers drops to ~0.55 on some texts). docbeam turns both off
and adds [CLS]/[SEP] itself around each window.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from model.config import CheckpointError


@dataclass(frozen=True)
class SpecialTokens:
    """The tokens the model expects around every window: BERT's [CLS] ... [SEP]."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    pad: int

    @property
    def count(self) -> int:
        return len(self.prefix) + len(self.suffix)

    def wrap(self, content) -> list[int]:
        return [*self.prefix, *content, *self.suffix]


def load_tokenizer(path: Path) -> tuple[Tokenizer, SpecialTokens]:
    file = Path(path) / "tokenizer.json"
    if not file.exists():
        raise CheckpointError(f"{path}: no tokenizer.json")
    tok = Tokenizer.from_file(str(file))
    tok.no_padding()
    tok.no_truncation()
    names = {"cls": "[CLS]", "sep": "[SEP]", "pad": "[PAD]"}
    stm = Path(path) / "special_tokens_map.json"
    if stm.exists():
        raw = json.loads(stm.read_text())
        for key in names:
            val = raw.get(f"{key}_token")
            names[key] = val["content"] if isinstance(val, dict) else (val or names[key])
    ids = {key: tok.token_to_id(tokname) for key, tokname in names.items()}
    missing = [names[k] for k, v in ids.items() if v is None]
    if missing:
        raise CheckpointError(f"{file}: special tokens {missing} not in the vocabulary")
    return tok, SpecialTokens(prefix=(ids["cls"],), suffix=(ids["sep"],), pad=ids["pad"])
