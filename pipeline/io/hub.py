"""`--model ORG/NAME[@REVISION]`: a Hugging Face hub checkpoint, through huggingface_hub.

The one adapter to huggingface_hub (tests/io/test_hub.py pins it, offline, against a
cache laid out the way huggingface_hub lays it out): its cache first, a download only
where the cache lacks the files and the network allows, safetensors and the small config
and tokenizer files only (never a pickle). Resolved once, at launch, to the commit the
files came from; the launcher then hands workers that local snapshot (local runners) or a
copy staged on GCS (Dataflow workers may have no public IP).

The default model's hub id names the installed default package when there is one (online
or not): it is recorded as that package, never as a hub commit it cannot know offline.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from docbeam.model.checkpoint import DEFAULT_MODEL_NAME, default_checkpoint_dir_or_none
from docbeam.model.errors import CheckpointError

# What a checkpoint needs (fnmatch patterns, also used for gs:// checkpoints).
CHECKPOINT_PATTERNS = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "modules.json",
    "*_Pooling/config.json",
    "*_Dense/config.json",
    "*_Dense/model.safetensors",
)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")


def is_hub_id(spec: str) -> bool:
    """ORG/NAME or ORG/NAME@REVISION that is not a local path or a gs:// prefix."""
    return "://" not in spec and not Path(spec).exists() and bool(_HUB_ID.match(spec))


def is_installed_default(spec: str) -> bool:
    """The default model's hub id (no @REVISION: a revision is a hub commit) while the default
    package is installed: that package answers to it, without the hub."""
    return spec == DEFAULT_MODEL_NAME and default_checkpoint_dir_or_none() is not None


def path_hint(spec: str) -> str:
    """For a --model that is neither a directory nor a hub id: how to name a hub model, and
    the default's hub id when `spec` is its name without the organisation."""
    if "://" in spec or "/" in spec or Path(spec).exists():
        return ""
    tail = DEFAULT_MODEL_NAME.split("/")[1]
    meant = f" (did you mean {DEFAULT_MODEL_NAME}?)" if difflib.get_close_matches(spec.lower(), [tail.lower()]) else ""
    return f"; a Hugging Face hub model is named ORG/NAME[@REVISION]{meant}"


@dataclass(frozen=True)
class HubCheckpoint:
    repo_id: str
    revision: str  # the commit the snapshot holds
    path: Path  # the snapshot directory in the cache

    @property
    def name(self) -> str:
        return f"{self.repo_id}@{self.revision}"


def resolve(spec: str, cache_dir: Path | None = None, flag: str = "--model") -> HubCheckpoint:
    """The local snapshot of `spec`: from the cache, else downloaded (where the network allows).
    `flag` names the option in errors (--model, --ner-model)."""
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    repo_id, _, revision = spec.partition("@")

    def download(local_only: bool) -> Path:
        return Path(
            snapshot_download(
                repo_id,
                revision=revision or None,
                allow_patterns=list(CHECKPOINT_PATTERNS),
                cache_dir=cache_dir,
                local_files_only=local_only,
            )
        )

    try:
        path = download(local_only=True)
    except LocalEntryNotFoundError:
        if constants.HF_HUB_OFFLINE:
            where = cache_dir or constants.HF_HUB_CACHE
            raise CheckpointError(
                f"{flag} {spec}: not in the Hugging Face cache ({where}) and HF_HUB_OFFLINE is set; "
                f"download it where the network allows (`hf download {repo_id}`) or pass a local directory"
            ) from None
        hub_at = f"the Hugging Face hub ({constants.ENDPOINT})"
        try:
            path = download(local_only=False)
        # One line naming the model and which of these it is: the user's fix differs.
        except GatedRepoError as exc:  # before RepositoryNotFoundError: it is one
            raise CheckpointError(
                f"{flag} {spec}: gated on {hub_at}: accept its terms on the model page and log in (`hf auth login`)"
            ) from exc
        except RepositoryNotFoundError as exc:
            raise CheckpointError(
                f"{flag} {spec}: no such model on {hub_at} (check ORG/NAME; a private model needs `hf auth login`)"
            ) from exc
        except RevisionNotFoundError as exc:
            raise CheckpointError(f"{flag} {spec}: {repo_id} has no revision {revision!r} on {hub_at}") from exc
        except HfHubHTTPError as exc:
            raise CheckpointError(f"{flag} {spec}: {hub_at} answered {str(exc).splitlines()[0]}") from exc
        except LocalEntryNotFoundError as exc:  # the hub client's wrapper when no request got through
            cause = exc.__cause__ or exc
            raise CheckpointError(
                f"{flag} {spec}: cannot reach {hub_at} ({type(cause).__name__}: {cause}) and it is not in the "
                f"cache ({cache_dir or constants.HF_HUB_CACHE}); download it where the network allows "
                f"(`hf download {repo_id}`) or pass a local directory"
            ) from exc
        except Exception as exc:  # anything else: still one line naming the model
            raise CheckpointError(f"{flag} {spec}: cannot fetch it from {hub_at}: {exc}") from exc
    if not (path / "model.safetensors").exists():
        raise CheckpointError(
            f"{flag} {spec}: no model.safetensors at revision {path.name} (docbeam loads safetensors only, "
            "never pickled weights)"
        )
    return HubCheckpoint(repo_id, path.name, path)
