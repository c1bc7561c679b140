"""A query's vector for a run: the checkpoint its manifest records, byte for byte, embedded as
`docbeam embed` embeds it (the checkpoint's query prompt, the run's dtype and window)."""

import functools
from pathlib import Path

import numpy as np

from docbeam.model.config import CheckpointError
from docbeam.pipeline.io.checkpoints import checkpoint_dir, verify_checkpoint_files


class ModelError(ValueError):
    """The run's model cannot be loaded here, or the files here are not the run's."""


def model_spec(model: dict) -> str | None:
    """What to load for the manifest's `model` record (a `--model` value; None: the installed
    default): the hub commit the run resolved, the default package, else the path it loaded."""
    source = model.get("source") or {}
    if "hub" in source:
        return f"{source['hub']}@{source['revision']}"
    if "package" in source:
        return None
    path = model.get("path")
    return None if path in (None, "(default)") else path


def run_checkpoint(model: dict, override: str | None = None) -> Path:
    """The local folder of the run's checkpoint (or of `override`, a copy of it), refused unless
    every file the loader reads has the sha256 the run recorded (`files_sha256`)."""
    name = model.get("name") or model.get("path") or "(unnamed)"
    spec = override or model_spec(model)
    where = f" (--model {override})" if override else ""
    try:
        local = checkpoint_dir(spec)
    except CheckpointError as exc:
        raise ModelError(f"the run's model {name}{where} cannot be loaded here: {exc}") from None
    pins = model.get("files_sha256")
    if pins:
        try:
            verify_checkpoint_files(name, local, pins)
        except CheckpointError as exc:
            raise ModelError(
                f"the run's model {name}{where}: the files at {local} are not the ones the run embedded with "
                f"({exc}); pass --model with a copy of the run's checkpoint"
            ) from None
    return local


@functools.cache
def query_embedder(local: Path, dtype: str, max_seq_len: int | None, stride: int | None):
    from docbeam.pipeline.encode.embed import Embedder  # JAX loads here, not when the module is imported

    # prompt_name None: the checkpoint's query prompt, as `docbeam embed` gives queries.
    return Embedder(str(local), dtype=dtype, max_seq_len=max_seq_len, stride=stride)


def embed_queries(model: dict, texts: list[str], override: str | None = None) -> np.ndarray:
    """[len(texts), dim] query vectors for the run whose manifest `model` record this is."""
    local = run_checkpoint(model, override)
    try:
        embedder = query_embedder(local, model.get("dtype") or "float32", model.get("max_seq_len"), model.get("stride"))
    except (CheckpointError, ValueError) as exc:
        raise ModelError(f"the run's model {model.get('name')}: {exc}") from None
    vectors = embedder(texts)
    if vectors.shape[1] != model.get("dim", vectors.shape[1]):
        raise ModelError(f"the run's model gives {vectors.shape[1]} floats, the run stored {model['dim']}")
    return vectors
