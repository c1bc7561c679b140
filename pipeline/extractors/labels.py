"""Zero-shot labels: cosine of the document embedding to each label's nearest description.

A label file (JSON or YAML) maps each label to one or more descriptions; a label's score for a
document is the highest cosine of the document embedding to the embeddings of the label's name
and descriptions. The descriptions are embedded once per run, in the same encoder pass as the
documents (run-wide "shared" segments), never per document. Each document gets its `top_k`
best labels among those scoring at least `min_score`; a document no label reaches gets no
label row (zero-shot with a small model should say "none of these" rather than guess).

Nearest description, not the mean of them (a prototype, version 1): a label covers documents
of several kinds (technical documentation: man pages, READMEs, manuals, API references), and
a document is like one of them, not like their average; the mean of many unlike descriptions
sits far from each, so a label with more kinds scored lower for every one of its documents.
Measured on the labelled real documents (tests/benchmarks/real_labels.py) and the synthetic
sets (docs/extractions.md).
"""

import json
from pathlib import Path

import numpy as np
import yaml

from docbeam.pipeline.core.flags import LABEL_MIN_SCORE
from docbeam.pipeline.core.records import DocInfo, Segment, SegmentVector
from docbeam.pipeline.extractors.base import SHARED_UID, Extractor, ExtractorError, candidate_text, row
from docbeam.pipeline.ingest.chunking import encode_short

DEFAULT_LABELS = Path(__file__).resolve().parent.parent / "data" / "default_labels.yaml"


def load_labels(path: str | Path | None) -> dict[str, list[str]]:
    path = Path(path) if path else DEFAULT_LABELS
    try:
        text = path.read_text()
    except OSError as exc:
        raise ExtractorError(f"label file {path}: cannot read ({exc.strerror})") from exc
    try:
        raw = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ExtractorError(f"label file {path}: does not parse: {exc}") from exc
    if not isinstance(raw, dict) or not raw:
        raise ExtractorError(f"label file {path}: expected a non-empty mapping of label -> description(s)")
    labels = {}
    for label, desc in raw.items():
        descs = [desc] if isinstance(desc, str) else desc
        if (
            not isinstance(label, str)
            or not isinstance(descs, list)
            or not descs
            or not all(isinstance(d, str) and d.strip() for d in descs)
        ):
            raise ExtractorError(f"label file {path}: label {label!r} needs a description or a list of them")
        labels[label] = descs
    return labels


class Labels(Extractor):
    name = "labels"
    row_kind = "label"
    version = 2  # a label's score: its nearest description (was: the mean of them)

    def __init__(self, labels_file: str | None = None, min_score: float = LABEL_MIN_SCORE, top_k: int = 1):
        if top_k < 1:
            raise ValueError(f"label top-k {top_k}: must be at least 1")
        if not -1 <= min_score <= 1:
            raise ValueError(f"label min-score {min_score}: a cosine, in [-1, 1]")
        self.labels = load_labels(labels_file)
        self.min_score, self.top_k = min_score, top_k

    def shared_segments(self, tokenizer, special, max_seq_len: int) -> list[Segment]:
        pairs = [(label, d) for label, descs in self.labels.items() for d in [label, *descs]]
        ids = encode_short([d for _, d in pairs], tokenizer, special, max_seq_len)
        return [
            Segment(
                uid=SHARED_UID,
                doc_id=SHARED_UID,
                kind=self.name,
                index=i,
                start_char=0,
                end_char=0,
                ids=tok,
                text=label,
            )
            for i, ((label, _), tok) in enumerate(zip(pairs, ids))
        ]

    def extract(self, info: DocInfo, embedding: np.ndarray, vectors, shared: list[SegmentVector], chunks) -> list[dict]:
        names = list(self.labels)
        scores = np.full(len(names), -np.inf)
        doc = embedding.astype(np.float64)
        for v in shared:
            i = names.index(candidate_text(v))
            scores[i] = max(scores[i], float(v.vector.astype(np.float64) @ doc))
        order = np.argsort(-scores, kind="stable")
        keep = [i for i in order[: self.top_k] if scores[i] >= self.min_score]
        return [row(info.doc_id, "label", names[i], scores[i], None, None) for i in keep]
