"""Which languages the embedding model was trained for, and the warning a run gets when a
sizeable share of its documents is in a language an English-only model was not trained on.

The checkpoint says it first: the `language:` field of its model card (README.md front
matter, as the Hugging Face hub and sentence-transformers write it; "multilingual" or several
codes mean not English-only). A checkpoint without one (a bare folder) is looked up by name in
ENGLISH_ONLY, a list of well-known English-only checkpoints; otherwise its languages are
unknown and nothing is warned.

The warning fires when at least WARN_SHARE (20%) of the documents written are detected as a
language other than English: from one document in five, a noticeable part of what a search
returns is ranked by a model that does not read that language (English-only sentence
embedders place texts of other languages by their shared tokens: names, numbers, loanwords).
Undetermined documents do not count either way.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

WARN_SHARE = 0.2
UNDETERMINED = "und"  # ISO 639-2 "undetermined": the manifest's key for documents without a language
# Known English-only checkpoints (the hub name without its organisation), for a checkpoint
# whose folder has no model card. Their cards all say `language: en`.
ENGLISH_ONLY = frozenset(
    {
        "all-minilm-l6-v2", "all-minilm-l12-v2", "all-mpnet-base-v2", "all-distilroberta-v1",
        "multi-qa-minilm-l6-cos-v1", "multi-qa-mpnet-base-dot-v1", "msmarco-minilm-l6-cos-v5",
        "bge-small-en-v1.5", "bge-base-en-v1.5", "bge-large-en-v1.5",
        "e5-small-v2", "e5-base-v2", "e5-large-v2",
        "gte-small", "gte-base", "gte-large",
        "modernbert-embed-base", "nomic-embed-text-v1.5",
    }
)  # fmt: skip
# Multilingual checkpoints docbeam runs (docs/models.md, "Model families that work").
MULTILINGUAL = (
    "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
    "intfloat/multilingual-e5-small",
    "BAAI/bge-m3",
)


@dataclass(frozen=True)
class ModelLanguages:
    languages: tuple[str, ...] | None  # None: unknown
    source: str  # where that was read: "model card", "known English-only checkpoints", "unknown"

    @property
    def english_only(self) -> bool:
        return self.languages == ("en",)

    def record(self) -> dict:
        return {"languages": list(self.languages) if self.languages else None, "from": self.source}

    @classmethod
    def of_record(cls, record: dict) -> "ModelLanguages":
        langs = record.get("languages")
        return cls(tuple(langs) if langs else None, record.get("from", "unknown"))


def model_card_languages(path: Path) -> tuple[str, ...] | None:
    """The `language:` of the checkpoint's README.md front matter, lower case; None without one."""
    card = path / "README.md"
    try:
        text = card.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    found = re.match(r"---\s*\n(.*?)\n---\s*\n", text, re.S)
    if not found:
        return None
    try:
        meta = yaml.safe_load(found.group(1))
    except yaml.YAMLError:
        return None
    value = meta.get("language") if isinstance(meta, dict) else None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        return None
    return tuple(sorted({str(v).strip().lower() for v in value}))


def of_model(path: Path, name: str) -> ModelLanguages:
    """What the checkpoint at `path` (named `name`: a hub id, a folder) was trained on."""
    declared = model_card_languages(path)
    if declared:
        return ModelLanguages(declared, "model card")
    bare = name.split("@")[0].rstrip("/").rsplit("/", 1)[-1].lower()
    if bare in ENGLISH_ONLY:
        return ModelLanguages(("en",), "known English-only checkpoints")
    return ModelLanguages(None, "unknown")


def counts(languages: list[str | None]) -> dict[str, int]:
    """Documents per language code (UNDETERMINED for those without one), most frequent first."""
    out: dict[str, int] = {}
    for lang in languages:
        out[lang or UNDETERMINED] = out.get(lang or UNDETERMINED, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


def warning(by_language: dict[str, int], model: ModelLanguages, model_name: str) -> str | None:
    """The warning for a run whose English-only model got a sizeable share of other languages."""
    total = sum(by_language.values())
    other = {k: n for k, n in by_language.items() if k not in ("en", UNDETERMINED)}
    if not model.english_only or not total or sum(other.values()) < WARN_SHARE * total:
        return None
    langs = ", ".join(f"{k}: {n}" for k, n in sorted(other.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"{sum(other.values())} of {total} documents ({sum(other.values()) / total:.0%}) are not in English "
        f"({langs}), but the model {model_name} is English-only ({model.source}); their vectors, summaries "
        f"and keyphrases will be poor. A multilingual model docbeam runs: "
        + ", ".join(f"--model {m}" for m in MULTILINGUAL)
    )
