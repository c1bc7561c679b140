"""`--reuse` with an encoder extractor added or its settings changed: its candidates alone are encoded.

A reused document keeps its vectors (reuse.Copy copies its document embedding and chunk
vectors). An extractor that needs the encoder (keyphrases, summary, labels) and is new or
changed since the previous run then runs on those copied vectors: its candidate segments ride
the run's one encoder pass (Pack -> Encode, beside the changed documents' windows), grouped
back by doc_id with the other vectors, and `Extract` turns them into rows as Assemble does
for an encoded document, with the previous document embedding. The chunks are never encoded
again (README, "Incremental runs").

    Copy -> Candidates -> segments (to Pack) + ReusedDoc (to the group by doc_id) -> Extract
"""

from dataclasses import dataclass

import apache_beam as beam
import numpy as np

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core.records import DocInfo, Document, SegmentVector
from docbeam.pipeline.core.stages import SKIPPED_PREFIX, Stage, extract_stage
from docbeam.pipeline.cost.metering import StageMeter
from docbeam.pipeline.extractors.base import Extractor, text_only
from docbeam.pipeline.graph.job_plan import JobPlan


@dataclass(frozen=True)
class Copied:
    """What Copy hands over of a reused document: the document and its copied vectors."""

    doc: Document
    n_tokens: int
    embedding: np.ndarray
    chunks: list[np.ndarray]  # chunk vectors by chunk_index


@dataclass(frozen=True)
class ReusedDoc:
    """A reused document waiting for its candidates' vectors (`info.n_segments` of them)."""

    info: DocInfo
    embedding: np.ndarray
    chunks: list[np.ndarray]


def encoded_extractors(plan: JobPlan) -> list[Extractor]:
    """The extractors run on reused documents that need the encoder: their candidates are encoded."""
    run = plan.reuse.run_kinds if plan.reuse else ()
    return [ex for ex in plan.extractors if ex.name in run and not text_only(ex)]


def copied(doc: Document, old: dict, chunk_rows: list[dict]) -> Copied:
    chunks = [np.asarray(c["embedding"], np.float32) for c in sorted(chunk_rows, key=lambda c: c["chunk_index"])]
    return Copied(doc, int(old["n_tokens"]), np.asarray(old["embedding"], np.float32), chunks)


class Candidates(beam.DoFn):
    """A reused document -> the candidate segments of the extractors that run on it (one list,
    for Pack), and its ReusedDoc on INFO, keyed by doc_id."""

    INFO = "info"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.extractors = encoded_extractors(self.plan)
        # Counted as the chunk stage counts an encoded document's candidates: the progress
        # display's encoder work includes them.
        self.meter = StageMeter(Stage.CHUNK)
        self.ex_meters = {ex.name: StageMeter(extract_stage(ex.name)) for ex in self.extractors}
        self.tokenizer, self.special = load_tokenizer(self.plan.encoder.local_checkpoint())

    def process(self, item: Copied):
        doc, segments = item.doc, []
        for ex in self.extractors:
            if why := ex.skip_reason(doc):
                self.ex_meters[ex.name].count(f"{SKIPPED_PREFIX}{why}")
            segments += ex.candidates(doc, self.tokenizer, self.special, self.plan.windowing.max_seq_len)
        self.meter.live(live_candidate_tokens=sum(len(s.ids) for s in segments))
        if segments:
            yield segments
        info = DocInfo(
            uid=doc.uid,
            doc_id=doc.doc_id,
            source=doc.source,
            row=doc.row,
            n_chars=len(doc.text),
            n_tokens=item.n_tokens,
            n_chunks=len(item.chunks),
            n_segments=len(segments),
            metadata=doc.metadata,
            provenance=doc.provenance,
            language=doc.language,
        )
        yield beam.pvalue.TaggedOutput(self.INFO, (doc.doc_id, ReusedDoc(info, item.embedding, item.chunks)))


class Extract(beam.DoFn):
    """Per doc_id grouped with the encoder's vectors: a reused document's rows of the extractors
    that run on it. Documents that were encoded (no ReusedDoc) are Assemble's."""

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.extractors = encoded_extractors(self.plan)
        self.ex_meters = {ex.name: StageMeter(extract_stage(ex.name)) for ex in self.extractors}

    def process(self, item, shared: list[SegmentVector]):
        doc_id, grouped = item
        for r in grouped["reused"]:  # none for an encoded document; one for a reused one (Decide)
            yield from self._rows(
                doc_id, r, [v for part in grouped["vec"] for v in part if v.uid == r.info.uid], shared
            )

    def _rows(self, doc_id: str, r: ReusedDoc, vectors: list[SegmentVector], shared: list[SegmentVector]) -> list[dict]:
        if len(vectors) != r.info.n_segments:
            # Its vectors and rows are written already: a missing candidate cannot reject it, and
            # rows from part of its candidates would be wrong without a word. Fail the job.
            raise RuntimeError(
                f"{r.info.source}: doc_id {doc_id!r}: expected {r.info.n_segments} candidate vectors, "
                f"got {len(vectors)}"
            )
        rows = []
        for ex in self.extractors:

            def work(ex=ex) -> list[dict]:
                mine = [v for v in vectors if v.kind == ex.name]
                theirs = [v for v in shared if v.kind == ex.name]
                return ex.extract(r.info, r.embedding, mine, theirs, r.chunks)

            rows += self.ex_meters[ex.name].counted(work, inputs=1)
        return rows
