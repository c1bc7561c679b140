"""`--dims` and `--vector-dtype` at launch: the run's vector format, its settings entry, the
warning for a model not trained for truncation, what `--reuse` can convert instead of encoding
again, and the int8 ranges fixed before the job."""

import logging
import re
from pathlib import Path

import numpy as np

from docbeam.model.checkpoint import Checkpoint
from docbeam.pipeline.core import fingerprint
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.vector_format import INT8, RANGES_FILE, VectorFormat
from docbeam.pipeline.graph.job_plan import Reuse
from docbeam.pipeline.io import vector_ranges

log = logging.getLogger("docbeam")

SETTING = "vectors"  # the settings' key: present only when the format is not the full float32 vectors
# Where a checkpoint says it was trained for truncation: its model card (sentence-transformers
# writes `loss:MatryoshkaLoss` among the tags and names the loss in the text) and its configs.
CARD_FILES = ("README.md", "config_sentence_transformers.json", "config.json")
MATRYOSHKA = re.compile(r"matryoshka", re.IGNORECASE)


def trained_for_truncation(path: Path | str) -> str | None:
    """The file of the checkpoint that says it was trained with Matryoshka loss, or None."""
    for name in CARD_FILES:
        f = Path(path) / name
        if f.is_file() and MATRYOSHKA.search(f.read_text(encoding="utf-8", errors="replace")):
            return name
    return None


def vector_format(d, ckpt: Checkpoint) -> VectorFormat:
    """The flags' format for this checkpoint (UsageError for --dims past its vectors); warns once
    when --dims cuts the vectors of a model whose card does not say it was trained for it."""
    try:
        fmt = VectorFormat(ckpt.config.embedding_dim, d.dims, d.vector_dtype)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if fmt.dim < fmt.model_dim and trained_for_truncation(ckpt.path) is None:
        log.warning(
            "--dims %d: the model's card and config do not say it was trained for truncation (Matryoshka); "
            "its first %d of %d dimensions work, with lower retrieval quality",
            fmt.dim,
            fmt.dim,
            fmt.model_dim,
        )
    return fmt


def setting(fmt: VectorFormat) -> dict:
    return {"dims": fmt.dim, "dtype": fmt.dtype}


def convertible(previous: dict, current: dict) -> bool:
    """Only the vector format differs from a previous run that kept the encoder's full float32
    vectors (no `vectors` setting): its vectors are converted, not encoded again. A previous run
    that stored truncated or quantised vectors cannot give the others back: encoded again."""
    if previous.get(SETTING) is not None or previous.get(SETTING) == current.get(SETTING):
        return False
    rest = [k for k in fingerprint.changed(fingerprint.vectors_part(previous), fingerprint.vectors_part(current))]
    return all(k.startswith(SETTING + " ") or k == SETTING for k in rest)


def converting(previous: dict, current: dict) -> str:
    now = current.get(SETTING) or {}
    return (
        f"only the vector format changed (full float32 -> {now.get('dims')} dims, {now.get('dtype')}): "
        "its vectors are converted, not encoded again"
    )


def fixed_ranges(fmt: VectorFormat, reuse: Reuse | None) -> dict | None:
    """int8 ranges this run must use before it calibrates any: those of the run whose int8 codes
    it copies unchanged (--reuse with the same format). None: the job calibrates its own."""
    if fmt.dtype != INT8 or reuse is None or not reuse.reuses_vectors or reuse.convert_vectors:
        return None
    ranges = vector_ranges.read(reuse.output)
    if ranges is None:
        raise UsageError(f"--reuse {reuse.output}: an int8 run without its {RANGES_FILE}; its codes cannot be decoded")
    return {t: np.asarray(r, np.float32).tolist() for t, r in ranges.items()}
