"""The checkpoint's own tokenizer.json, made safe for windowed embedding.

Trap: all-MiniLM-L6-v2's tokenizer.json pads to 128 and truncates at 128. Loaded as-is,
short texts get padding averaged into the mean and long ones lose everything past 128
(cosine to sentence-transformers drops to ~0.55 on some texts). docbeam turns both off
and adds the special tokens itself around each window.

Which special tokens, and where, is the tokenizer's post-processor's business
(BertProcessing and TemplateProcessing: [CLS] ... [SEP]; RobertaProcessing and XLM-R's
template: <s> ... </s>; none at all for some). docbeam runs that post-processor once on a
probe and reads off the special tokens in front of and behind the content.
"""

import json
from dataclasses import dataclass
from pathlib import Path

from tokenizers import Tokenizer

from docbeam.model.errors import CheckpointError

_PAD_NAMES = ("[PAD]", "<pad>", "<|padding|>")


@dataclass(frozen=True)
class SpecialTokens:
    """The tokens the model expects around every window (BERT: [CLS] ... [SEP])."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    pad: int

    @property
    def count(self) -> int:
        return len(self.prefix) + len(self.suffix)

    def wrap(self, content) -> list[int]:
        return [*self.prefix, *content, *self.suffix]


def special_tokens(tok: Tokenizer, where: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(prefix, suffix) the post-processor puts around a single sequence."""
    content = tok.encode("a", add_special_tokens=False)
    if not content.ids:
        raise CheckpointError(f"{where}: the tokenizer turns the probe text 'a' into no tokens")
    full = tok.post_process(content, add_special_tokens=True)
    special = full.special_tokens_mask
    inner = [i for i, s in enumerate(special) if not s]
    first, last = inner[0], inner[-1]
    if full.ids[first : last + 1] != content.ids or any(special[first : last + 1]):
        raise CheckpointError(f"{where}: the post-processor does not wrap a sequence as prefix + content + suffix")
    return tuple(full.ids[:first]), tuple(full.ids[last + 1 :])


def _pad_id(tok: Tokenizer, path: Path) -> int:
    """The padding id (only ever sits under segment id 0, so any valid id would do)."""
    if tok.padding and tok.padding.get("pad_id") is not None:
        return int(tok.padding["pad_id"])
    stm = path / "special_tokens_map.json"
    if stm.exists():
        val = json.loads(stm.read_text()).get("pad_token")
        name = val["content"] if isinstance(val, dict) else val
        if name and (found := tok.token_to_id(name)) is not None:
            return found
    for name in _PAD_NAMES:
        if (found := tok.token_to_id(name)) is not None:
            return found
    return 0


def load_tokenizer(path: Path) -> tuple[Tokenizer, SpecialTokens]:
    file = Path(path) / "tokenizer.json"
    if not file.exists():
        raise CheckpointError(f"{path}: no tokenizer.json")
    tok = Tokenizer.from_file(str(file))
    pad = _pad_id(tok, Path(path))  # read before padding is turned off
    tok.no_padding()
    tok.no_truncation()
    prefix, suffix = special_tokens(tok, str(file))
    return tok, SpecialTokens(prefix=prefix, suffix=suffix, pad=pad)
