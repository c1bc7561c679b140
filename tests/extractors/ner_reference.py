"""docbeam's named entities outside Beam, through the pipeline's own pieces, and the
transformers pipeline's on the same texts (shared by the NER tests)."""

import warnings
from collections.abc import Sequence
from pathlib import Path

from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
from docbeam.model.token_classification import read_labels
from docbeam.pipeline.core.records import Document
from docbeam.pipeline.encode.handler import _token_scores
from docbeam.pipeline.encode.packing import Packer, PackSpec, default_rows
from docbeam.pipeline.encode.runtime import TOKEN_CLASSIFICATION, EncoderRuntime, EncoderSettings
from docbeam.pipeline.extractors.ner_aggregation import Entity, WindowReader, document_entities
from docbeam.pipeline.ingest.chunking import Frame, Windowing
from docbeam.pipeline.ingest.ner_windows import Chunker, model_windows


def documents(texts: Sequence[str]) -> list[Document]:
    return [Document(uid=f"t#{i}", doc_id=f"t{i}", source="t", row=i, text=t) for i, t in enumerate(texts)]


def embedding_chunker(max_seq_len: int = 256) -> Chunker:
    """The default model's chunking at the default stride: the spans the pipeline's NER windows follow."""
    ckpt = describe_checkpoint(default_checkpoint_dir())
    win = Windowing.of(max_seq_len, specials=ckpt.special.count)
    return Chunker(ckpt.tokenizer, Frame(ckpt.special), win)


class Docbeam:
    """One token classifier: windows, packing and the encoder runtime as the pipeline runs them."""

    def __init__(self, path: Path, dtype: str = "float32"):
        self.ckpt = describe_checkpoint(path)
        self.labels = read_labels(path)
        seq = self.ckpt.config.max_seq_len
        self.pack = PackSpec(rows=default_rows(seq), seq_len=seq)
        settings = EncoderSettings(str(path), None, "auto", dtype, self.pack, task=TOKEN_CLASSIFICATION)
        self.runtime = EncoderRuntime(settings)

    def windows(self, docs: list[Document], chunker: Chunker, max_seq_len: int | None = None) -> dict[str, list]:
        """doc_id -> its windows with their label probabilities, in window order; the classifier's
        windows hold `max_seq_len` tokens (default: its own window)."""
        windowing = Windowing(max_seq_len or self.pack.seq_len, 32, specials=self.ckpt.special.count)
        packer, batches = Packer(self.pack), []
        for _, segs in model_windows(docs, chunker, self.ckpt.tokenizer, self.ckpt.special, windowing):
            for seg in segs:
                batches += packer.add(seg)
        batches += packer.flush()
        outputs, kernels, _ = self.runtime.encode(batches)
        found: dict[str, list] = {d.doc_id: [] for d in docs}
        for b, out, k in zip(batches, outputs, kernels):
            for seg, scores in _token_scores(b, out, k):
                found[seg.doc_id].append((seg, scores))
        for windows in found.values():
            windows.sort(key=lambda w: w[0].index)
        return found

    def entities(self, windows: dict[str, list], strategy: str) -> dict[str, list[Entity]]:
        read = WindowReader(self.ckpt.tokenizer, self.ckpt.special, self.labels, strategy)
        return {doc_id: document_entities(read(ws)) for doc_id, ws in windows.items()}


class Transformers:
    """The transformers token-classification pipeline on a checkpoint. The model runs once per
    text; each aggregation strategy then post-processes the same outputs, the steps of the
    pipeline's own `ChunkPipeline.run_single` (test_reference_is_the_pipeline checks it
    against calling the pipeline)."""

    def __init__(self, path: Path):
        import torch
        from transformers import pipeline

        torch.set_num_threads(1)  # a tiny model: 3 ms per text on one thread, ~35 ms on two beside JAX
        self.pipe = pipeline("token-classification", model=str(path), device="cpu")
        self._outputs: dict[str, list] = {}

    def __call__(self, texts: Sequence[str], strategy: str) -> list[list[dict]]:
        pre, fwd, post = self.pipe._sanitize_parameters(aggregation_strategy=strategy)
        out = []
        with warnings.catch_warnings():  # "Tokenizer does not support real words" (XLM-R's heuristic)
            warnings.simplefilter("ignore", UserWarning)
            for text in texts:
                if text not in self._outputs:
                    self._outputs[text] = [self.pipe.forward(x, **fwd) for x in self.pipe.preprocess(text, **pre)]
                out.append(
                    [{**e, "score": float(e["score"])} for e in self.pipe.postprocess(self._outputs[text], **post)]
                )
        return out

    def called(self, text: str, strategy: str) -> list[dict]:
        """The pipeline called as a user calls it."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return [{**e, "score": float(e["score"])} for e in self.pipe(text, aggregation_strategy=strategy)]

    def windowed(self, windows: list, strategy: str) -> list[dict]:
        """The pipeline on each of docbeam's windows of one document, offsets moved to the
        document, overlaps resolved by the pipeline's own rule for its strided windows."""
        found = self([seg.text for seg, _ in windows], strategy)
        shifted = [
            {**e, "start": e["start"] + seg.start_char, "end": e["end"] + seg.start_char}
            for (seg, _), es in zip(windows, found)
            for e in es
        ]
        return self.pipe.aggregate_overlapping_entities(shifted) if len(windows) > 1 else shifted


def as_tuples(entities) -> list[tuple[str, int, int]]:
    return [
        (e.label, e.start, e.end) if isinstance(e, Entity) else (e["entity_group"], e["start"], e["end"])
        for e in entities
    ]


def scores(entities) -> list[float]:
    return [e.score if isinstance(e, Entity) else e["score"] for e in entities]
