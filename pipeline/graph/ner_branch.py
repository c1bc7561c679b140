"""The named-entity branch of the graph (--ner-model with --extract entities).

    documents -> NerWindows: the chunks' character spans in the classifier's own tokens
              -> NerPack -> NerEncode (RunInference: the same packing, runtime and kernels as
                 the embeddings; label probabilities per token instead of pooled vectors)
              -> NerEntities: entities per window (pipeline.extractors.ner)
              -> with the documents written, per doc_id: the kept record's entities, overlaps
                 between windows resolved once -> extractions/

A second encoder pass, not a second head: a token classifier's encoder weights (and in
practice its tokenizer: a cased BERT or XLM-R fine-tuned on CoNLL) are not the embedding
model's, so the embedding pass's hidden states are not what its classifier was trained on.

Entity rows are written only for the record that went to documents/ (same doc_id and
fingerprint): a duplicate doc_id, a document rejected downstream or one an earlier wave wrote
gets none. The branch rejects nothing: every document already ends in documents/ or errors/
through the main path, and a text without tokens for the classifier has no entities.
"""

import apache_beam as beam
import numpy as np
from apache_beam.ml.inference.base import RunInference

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core import fingerprint
from docbeam.pipeline.core.records import Document, Segment
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost.metering import StageMeter, metered
from docbeam.pipeline.encode.handler import EncoderHandler
from docbeam.pipeline.extractors.base import row
from docbeam.pipeline.extractors.ner_aggregation import WindowReader, document_entities
from docbeam.pipeline.graph.dofns import PackSegments, text_kib, text_size
from docbeam.pipeline.graph.job_plan import JobPlan, NerPlan
from docbeam.pipeline.ingest.chunking import Frame
from docbeam.pipeline.ingest.ner_windows import Chunker, model_windows

DOCS = "docs"


def with_entities(
    extractions: beam.PCollection, docs: beam.PCollection, documents: beam.PCollection, plan: JobPlan
) -> beam.PCollection:
    """`extractions` plus the entity rows of `docs` (parsed documents to encode) for those
    written to `documents`; `extractions` itself without --ner-model."""
    if plan.ner is None:
        return extractions
    windows = (
        docs
        | "NerBatchDocs" >> beam.BatchElements(min_batch_size=16, max_batch_size=4096, element_size_fn=text_kib)
        | "NerWindows" >> beam.ParDo(NerWindows(plan)).with_outputs(DOCS, main="windows")
    )
    found = (
        windows.windows
        | "NerPack" >> beam.ParDo(NerPack(plan.ner.encoder.pack))
        | "NerEncode" >> RunInference(EncoderHandler(plan.ner.encoder))
        | "NerEntities" >> beam.ParDo(WindowEntities(plan))
    )
    written = documents | "WrittenFingerprints" >> beam.Map(lambda d: (d["doc_id"], d["fingerprint"]))
    rows = (
        {"written": written, "docs": windows[DOCS], "windows": found}
        | "NerByDoc" >> beam.CoGroupByKey()
        | "NerRows" >> beam.ParDo(EntityRows())
    )
    return (extractions, rows) | "WithEntities" >> beam.Flatten()


def _ner(plan: JobPlan) -> NerPlan:
    assert plan.ner is not None, "the NER branch of a plan without --ner-model"
    return plan.ner


def _tokenizer(plan: JobPlan):
    encoder = _ner(plan).encoder
    return load_tokenizer(encoder.local_checkpoint())


class NerWindows(beam.DoFn):
    """A batch of documents -> their classifier windows; per document (doc_id, (uid,
    fingerprint, windows)) on the DOCS output, so the join knows how many windows to expect."""

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.NER_WINDOWS)
        self.settings = self.plan.settings_hash
        tok, special = load_tokenizer(self.plan.encoder.local_checkpoint())
        self.chunks = Chunker(tok, self.plan.frame or Frame(special), self.plan.windowing)
        self.tokenizer, self.special = _tokenizer(self.plan)

    @metered(inputs="batch", bytes_in=text_size)
    def process(self, docs: list[Document]):
        found = list(model_windows(docs, self.chunks, self.tokenizer, self.special, _ner(self.plan).windowing))
        for doc, windows in found:
            self.meter.add(tokens=sum(w.n_tokens for w in windows))
            yield from windows
            doc_fp = fingerprint.document(self.settings, doc.text)
            yield beam.pvalue.TaggedOutput(DOCS, (doc.doc_id, (doc.uid, doc_fp, len(windows))))


class NerPack(PackSegments):
    """The embeddings' packer, metered as the branch's own stage."""

    def setup(self):
        self.meter = StageMeter(Stage.NER_PACK)


class WindowEntities(beam.DoFn):
    """The classifier's output for a packed batch -> (doc_id, (uid, window index, entities)),
    offsets into the document."""

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.NER_ENTITIES)
        tok, special = _tokenizer(self.plan)
        self.read = WindowReader(tok, special, self.plan.ner.labels, self.plan.ner.aggregation)

    @metered(inputs="batch", outputs=False)  # the stage's `out` is EntityRows' rows
    def process(self, windows: list[tuple[Segment, np.ndarray]]):
        found = self.read(windows)
        for (seg, _), entities in zip(windows, found):
            yield seg.doc_id, (seg.uid, seg.index, entities)


class EntityRows(beam.DoFn):
    """Per doc_id: the entities of the record written to documents/, overlaps resolved once."""

    def setup(self):
        self.meter = StageMeter(Stage.NER_ENTITIES)

    @metered(inputs=None)
    def process(self, item):
        doc_id, grouped = item
        written = set(grouped["written"])
        kept = sorted(r for r in grouped["docs"] if r[1] in written)
        if not kept:  # not written in this run: rejected, a duplicate, or an earlier wave's
            return
        uid, _, expected = kept[0]
        windows = sorted((w for w in grouped["windows"] if w[0] == uid), key=lambda w: w[1])
        if len(windows) != expected:  # Beam lost or repeated a window: never write a partial answer
            raise RuntimeError(f"{doc_id}: {len(windows)} of {expected} NER windows came back")
        for e in document_entities([found for _, _, found in windows]):
            yield row(doc_id, f"entity:{e.label}", e.text, e.score, e.start, e.end)
