"""Texts -> vectors outside Beam, exactly as the pipeline computes them: queries, or a check
of a stored vector. Same checkpoint, tokenizer, chunking, packing, encoder, pooling and
normalisation as a job; a text that fits one window gets its chunk vector, a longer one the
document vector (the token-weighted mean of its chunks).
"""

import functools
from collections.abc import Sequence

import jax
import numpy as np

from docbeam.model.checkpoint import describe_checkpoint
from docbeam.pipeline.core.records import Document
from docbeam.pipeline.encode.doc_pooling import doc_embedding
from docbeam.pipeline.encode.packing import Packer, spec_for
from docbeam.pipeline.encode.runtime import EncoderRuntime, EncoderSettings
from docbeam.pipeline.ingest.chunking import Frame, Windowing, chunk_documents
from docbeam.pipeline.ingest.language_id import AUTO, language_of
from docbeam.pipeline.io.checkpoints import checkpoint_dir, checkpoint_files_sha256


class Embedder:
    """An encoder held in memory for many calls (compiled shapes are kept)."""

    def __init__(
        self,
        model: str | None = None,
        *,
        dtype: str = "float32",
        attention: str = "auto",
        max_seq_len: int | None = None,
        stride: int | None = None,
        language: str = AUTO,
        prompt_name: str | None = None,
    ):
        local = checkpoint_dir(model)  # hub ids too (the default's answers offline)
        ckpt = describe_checkpoint(local)
        seq = max_seq_len or ckpt.config.max_seq_len
        self.tokenizer = ckpt.tokenizer
        # Queries get the checkpoint's query prompt; `prompt_name` picks another (the one the
        # documents got, to reproduce a stored chunk vector).
        self.frame = Frame.of(ckpt, prompt_name, query=True)
        self.windowing = Windowing.of(seq, stride, specials=self.frame.count)
        self.language = language  # as --language: a code for every text, or auto: each text's own
        self.pack = spec_for(seq, jax.default_backend())
        # The encoder loads the same files the tokenizer above came from (pinned, as on a worker).
        pins = checkpoint_files_sha256(local, ckpt.weights_sha256)
        self.runtime = EncoderRuntime(EncoderSettings(model, None, attention, dtype, self.pack, files_sha256=pins))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """[len(texts), dim] float32, L2-normalised where the model normalises."""
        docs = [
            Document(uid=str(i), doc_id=str(i), source="embed", row=i, text=t, language=language_of(self.language, t))
            for i, t in enumerate(texts)
        ]
        packer, batches = Packer(self.pack), []
        for _, chunks in chunk_documents(docs, self.tokenizer, self.frame, self.windowing):
            for seg in chunks:
                batches += packer.add(seg)
        batches += packer.flush()
        outputs, _, _ = self.runtime.encode(batches)
        parts: dict[int, list[tuple[int, int, np.ndarray]]] = {}  # text -> (chunk index, tokens, vector)
        for batch, vecs in zip(batches, outputs):
            for row, sid, seg in batch.slots:
                parts.setdefault(int(seg.uid), []).append((seg.index, seg.n_tokens, vecs[row, sid - 1]))
        dim = self.runtime.checkpoint.config.embedding_dim
        out = np.zeros((len(texts), dim), np.float32)  # a text without tokens stays zeros
        for i, found in parts.items():
            found.sort(key=lambda c: c[0])
            out[i] = doc_embedding(np.stack([v for _, _, v in found]), np.array([n for _, n, _ in found]))
        return out


@functools.cache
def embedder(model: str | None, dtype: str, attention: str, prompt_name: str | None) -> Embedder:
    return Embedder(model, dtype=dtype, attention=attention, prompt_name=prompt_name)


def embed(
    texts: Sequence[str],
    model: str | None = None,
    *,
    dtype: str = "float32",
    attention: str = "auto",
    prompt_name: str | None = None,
) -> np.ndarray:
    """Vectors of `texts` as the pipeline computes them: `docbeam.pipeline.embed(["a question"])`.
    A model with prompts gives these texts its query prompt unless `prompt_name` says otherwise."""
    return embedder(model, dtype, attention, prompt_name)(list(texts))
