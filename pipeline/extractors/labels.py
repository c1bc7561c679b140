"""Zero-shot labels: cosine of the document embedding to label prototypes.

A label file (JSON or YAML) maps each label to one or more descriptions; a prototype is
the normalised mean of the embeddings of the label's name and its descriptions. The descriptions are embedded once per
run, in the same encoder pass as the documents (run-wide "shared" segments), never per
document. Each document gets its `top_k` best labels among those scoring at least
`min_score`; a document no label reaches gets no label row (zero-shot with a small model
should say "none of these" rather than guess).
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
        protos = np.zeros((len(names), len(embedding)))
        for v in shared:
            protos[names.index(candidate_text(v))] += v.vector
        protos /= np.maximum(np.linalg.norm(protos, axis=1, keepdims=True), 1e-12)
        scores = protos @ embedding.astype(np.float64)
        order = np.argsort(-scores, kind="stable")
        keep = [i for i in order[: self.top_k] if scores[i] >= self.min_score]
        return [row(info.doc_id, "label", names[i], scores[i], None, None) for i in keep]
