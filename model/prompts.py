"""Prompts from config_sentence_transformers.json, and the token ids they become.

sentence-transformers' rules (`encode_document` / `encode_query`): documents get the first
of the prompts named "document", "passage", "corpus"; queries get "query"; otherwise the
checkpoint's `default_prompt_name`, if any. `--prompt-name` overrides the documents' choice.

Tokens: sentence-transformers tokenizes `prompt + text` as one string. docbeam puts the
prompt's tokens in front of every window, so a prompt's ids are the tokens that the
prompt contributes at the start of that joint string (for "query: " with a SentencePiece
tokenizer: ▁query, :; not the lone ▁ that "query: " tokenized alone ends with).
When the Pooling module leaves the prompt out (`include_prompt: false`), it masks the
first `pool_skip` tokens: [CLS] plus the prompt tokenized *alone*, exactly as
sentence-transformers counts it.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from tokenizers import Tokenizer

from docbeam.model.errors import CheckpointError

DOCUMENT_NAMES = ("document", "passage", "corpus")
QUERY_NAMES = ("query",)
_PROBE = "docbeam"  # any word: the prompt's tokens are those that start before it


@dataclass(frozen=True)
class Prompts:
    texts: dict[str, str] = field(default_factory=dict)
    default_name: str | None = None

    @classmethod
    def from_dir(cls, path: Path) -> "Prompts":
        file = Path(path) / "config_sentence_transformers.json"
        if not file.exists():
            return cls()
        raw = json.loads(file.read_text())
        texts = {str(k): str(v) for k, v in (raw.get("prompts") or {}).items()}
        default = raw.get("default_prompt_name")
        if default is not None and default not in texts:
            raise CheckpointError(f"{file}: default_prompt_name {default!r} is not one of its prompts {sorted(texts)}")
        return cls(texts, default)

    def _first(self, names: tuple[str, ...]) -> str | None:
        found = [n for n in names if self.texts.get(n)]
        return found[0] if found else self.default_name

    @property
    def document(self) -> str | None:
        """The prompt name documents get (None: no prompt)."""
        return self._first(DOCUMENT_NAMES)

    @property
    def query(self) -> str | None:
        """The prompt name queries get (None: no prompt)."""
        return self._first(QUERY_NAMES)

    def resolve(self, name: str | None, where: str) -> str | None:
        """`--prompt-name` checked against the checkpoint: a clear error naming the choices."""
        if name is None:
            return self.document
        if name not in self.texts:
            have = ", ".join(sorted(self.texts)) or "none"
            raise CheckpointError(f"{where}: no prompt named {name!r} (the checkpoint's prompts: {have})")
        return name


@dataclass(frozen=True)
class PromptTokens:
    """One prompt as docbeam's windows use it."""

    name: str
    text: str
    ids: tuple[int, ...]  # goes between the prefix special tokens and the window's content
    pool_skip: int  # leading tokens of a window left out of pooling when include_prompt is false


def prompt_tokens(tokenizer: Tokenizer, name: str, text: str, prefix_len: int) -> PromptTokens:
    stem = text.rstrip()
    joint = tokenizer.encode(text + _PROBE, add_special_tokens=False)
    ids = tuple(i for i, (start, _) in zip(joint.ids, joint.offsets) if start < len(stem))
    alone = tokenizer.encode(text, add_special_tokens=False).ids
    return PromptTokens(name=name, text=text, ids=ids, pool_skip=prefix_len + len(alone))
