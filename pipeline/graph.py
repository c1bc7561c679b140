"""The Beam graph of one docbeam job.

    globs -> match -> parse -> tokenize+chunk (+ extraction candidates) -> pack -> encode
          -> group by doc_id -> assemble (+ extractions) -> Parquet / JSONL sinks

Every DoFn meters its own stage (metering.StageMeter); every rejection is routed to
errors/ with its reason; nothing is dropped silently.
"""

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from model.config import EncoderConfig
from model.tokenizer import load_tokenizer
from pipeline import sinks
from pipeline.assemble import AssembledDoc, assemble, pick_winner
from pipeline.chunking import Windowing, chunk_documents
from pipeline.documents import DocInfo, Document, Rejection, Segment, SegmentVector
from pipeline.encoder_runtime import EncoderSettings
from pipeline.extractors import SHARED_UID, Extractor
from pipeline.inference import EncoderHandler
from pipeline.metering import StageMeter
from pipeline.packing import Packer, PackSpec
from pipeline.parsers import ParseConfig, parse_file
from pipeline.storage import checkpoint_dir

ERRORS = "errors"
STAGE_ASSEMBLE = "assemble"


@dataclass(frozen=True)
class JobPlan:
    """Everything the graph needs, resolved by the launcher before the job starts."""

    globs: list[str]
    output: str
    parse: ParseConfig
    windowing: Windowing
    encoder: EncoderSettings
    model_name: str
    weights_sha256: str
    config: EncoderConfig  # the checkpoint's, read once by the launcher
    model_path: str | None  # --model as given (None: default; gs:// resolved on each worker)
    extractors: list[Extractor] = field(default_factory=list)
    files: list[tuple[str, int]] | None = None  # exact (path, size) to read instead of matching globs
    file_prefix: str = "part"  # output files are <table>/<file_prefix>-NNNNN-of-NNNNN.<ext>
    committed_documents: list[str] = field(default_factory=list)  # earlier waves' documents/ files

    @property
    def pack(self) -> PackSpec:
        return self.encoder.pack


def _kib(doc: Document) -> int:
    return max(1, len(doc.text) >> 10)


def timed_chunks(meter: StageMeter, items: Iterable, size: int = 64) -> Iterator[list]:
    """Pull items in small groups inside the stage's timer, hand them on outside it, so
    a fused downstream stage's time is not billed to this one."""
    it = iter(items)
    while True:
        with meter.timed():
            group = list(itertools.islice(it, size))
        if not group:
            return
        yield group


class MatchGlob(beam.DoFn):
    def setup(self):
        self.meter = StageMeter("match")

    def process(self, glob: str) -> Iterator[tuple[str, int]]:
        with self.meter.timed():
            found = sorted((m.path, m.size_in_bytes) for m in FileSystems.match([glob])[0].metadata_list)
        self.meter.add(elements_in=1, elements_out=len(found), bytes_out=sum(s for _, s in found))
        yield from found


class KnownFile(beam.DoFn):
    """A file the launcher listed already: metered as matched, never globbed again."""

    def setup(self):
        self.meter = StageMeter("match")

    def process(self, item: tuple[str, int]) -> Iterator[tuple[str, int]]:
        self.meter.add(elements_in=1, elements_out=1, bytes_out=item[1])
        yield item


class ParseFile(beam.DoFn):
    def __init__(self, cfg: ParseConfig):
        self.cfg = cfg

    def setup(self):
        self.meter = StageMeter("parse")

    def process(self, item: tuple[str, int]):
        path, size = item
        self.meter.add(elements_in=1, bytes_in=size)

        def open_file():
            # Uncompressed: docbeam decompresses itself, to cap gzip bombs and report truncation.
            return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)

        for group in timed_chunks(self.meter, parse_file(path, open_file, self.cfg)):
            for rec in group:
                if isinstance(rec, Rejection):
                    self.meter.add(rejected=1)
                    yield beam.pvalue.TaggedOutput(ERRORS, rec)
                else:
                    self.meter.add(elements_out=1, bytes_out=len(rec.text))
                    yield rec


class ChunkDocuments(beam.DoFn):
    """Tokenise and window a batch of documents; add the extractors' candidate segments."""

    INFO = "info"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter("chunk")
        self.tokenizer, self.special = load_tokenizer(checkpoint_dir(self.plan.model_path))

    def process(self, docs: list[Document]):
        self.meter.add(elements_in=len(docs), bytes_in=sum(len(d.text) for d in docs))
        with self.meter.timed():
            pairs = list(chunk_documents(docs, self.tokenizer, self.special, self.plan.windowing))
        for doc, chunks in pairs:
            yield from self._one(doc, chunks)

    def _one(self, doc: Document, chunks: Iterator[Segment]):
        n_chunks = content_tokens = 0
        for group in timed_chunks(self.meter, chunks):
            for seg in group:
                n_chunks += 1
                content_tokens += seg.n_tokens - 2
                yield seg
        if n_chunks == 0:
            self.meter.add(rejected=1)
            yield beam.pvalue.TaggedOutput(
                ERRORS,
                Rejection(
                    doc.source,
                    doc.doc_id,
                    "chunk",
                    "no_tokens",
                    f"{doc.source} row {doc.row}: text has no tokens for this model's tokenizer",
                    doc.row,
                ),
            )
            return
        with self.meter.timed():
            extra, rows = [], []
            for ex in self.plan.extractors:
                extra += ex.candidates(doc, self.tokenizer, self.special, self.plan.windowing.max_seq_len)
                rows += ex.text_rows(doc)
        yield from extra
        n_tokens = content_tokens - self.plan.windowing.stride * (n_chunks - 1)
        self.meter.add(elements_out=n_chunks + len(extra), tokens=n_tokens)
        yield beam.pvalue.TaggedOutput(
            self.INFO,
            DocInfo(
                doc.uid,
                doc.doc_id,
                doc.source,
                doc.row,
                len(doc.text),
                n_tokens,
                n_chunks,
                n_chunks + len(extra),
                doc.metadata,
                tuple(rows),
            ),
        )


class PackSegments(beam.DoFn):
    """Bundle-scoped packer: full batches leave as soon as the pool allows; the rest at bundle end."""

    def __init__(self, spec: PackSpec):
        self.spec = spec

    def setup(self):
        self.meter = StageMeter("pack")

    def start_bundle(self):
        self.packer = Packer(self.spec)

    def _count(self, batches):
        for b in batches:
            real = b.real_tokens
            self.meter.add(elements_out=1, tokens=real, pad_tokens=b.tokens.size - real, bytes_out=b.tokens.nbytes * 3)
        return batches

    def process(self, seg: Segment):
        self.meter.add(elements_in=1)
        with self.meter.timed():
            ready = self._count(list(self.packer.add(seg)))
        yield from ready

    def finish_bundle(self):
        with self.meter.timed():
            ready = self._count(list(self.packer.flush()))
        for b in ready:
            yield GlobalWindows.windowed_value(b)


class Assemble(beam.DoFn):
    CHUNKS, EXTRACTIONS = "chunks", "extractions"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter("assemble")
        self.ex_meters = {ex.name: StageMeter(f"extract_{ex.name}") for ex in self.plan.extractors}

    def process(self, item, shared: list[SegmentVector]):
        doc_id, grouped = item
        infos, vectors = list(grouped["info"]), list(grouped["vec"])
        if not infos:  # a doc_id only an earlier wave has: nothing to do here
            return
        self.meter.add(elements_in=len(infos))
        if list(grouped["committed"]):  # an earlier wave of this run already wrote this doc_id
            for info in infos:
                self.meter.add(rejected=1)
                yield beam.pvalue.TaggedOutput(
                    ERRORS,
                    Rejection(
                        info.source,
                        doc_id,
                        STAGE_ASSEMBLE,
                        "duplicate_doc_id",
                        f"{info.source} row {info.row}: doc_id {doc_id!r} already written by an earlier wave",
                        info.row,
                    ),
                )
            return
        with self.meter.timed():
            kept, dupes = pick_winner(infos)
            result = assemble(kept, [v for v in vectors if v.uid == kept.uid], self.plan.model_name)
        for rej in dupes:
            self.meter.add(rejected=1)
            yield beam.pvalue.TaggedOutput(ERRORS, rej)
        if isinstance(result, Rejection):
            self.meter.add(rejected=1)
            yield beam.pvalue.TaggedOutput(ERRORS, result)
            return
        self.meter.add(elements_out=1)
        yield result.document
        for c in result.chunks:
            yield beam.pvalue.TaggedOutput(self.CHUNKS, c)
        for r in list(kept.extractions) + self._extract(kept, result, shared):
            yield beam.pvalue.TaggedOutput(self.EXTRACTIONS, r)

    def _extract(self, info: DocInfo, result: AssembledDoc, shared: list[SegmentVector]) -> list[dict]:
        rows = []
        for ex in self.plan.extractors:
            meter = self.ex_meters[ex.name]
            with meter.timed():
                mine = [v for v in result.others if v.kind == ex.name]
                chunks = [c["embedding"] for c in result.chunks]
                out = ex.extract(
                    info, result.document["embedding"], mine, [v for v in shared if v.kind == ex.name], chunks
                )
            meter.add(elements_in=1, elements_out=len(out))
            rows += out
        return rows


def build(p: beam.Pipeline, plan: JobPlan, handler: EncoderHandler | None = None) -> dict[str, beam.PCollection]:
    """Wire the job into `p`; returns the output PCollections by table name.
    `handler` replaces the encoder's ModelHandler (tests use it to inject faults)."""
    handler = handler or EncoderHandler(plan.encoder)
    if plan.files is None:
        files = p | "Globs" >> beam.Create(plan.globs) | "Match" >> beam.ParDo(MatchGlob())
    else:
        files = p | "Files" >> beam.Create(plan.files) | "Listed" >> beam.ParDo(KnownFile())
    files = files | "SpreadFiles" >> beam.Reshuffle()
    parsed = files | "Parse" >> beam.ParDo(ParseFile(plan.parse)).with_outputs(ERRORS, main="docs")
    chunked = (
        parsed.docs
        # Batches for the tokenizer, sized by text (KiB), not count: 256 documents of 64 MiB
        # each would otherwise sit in memory together.
        | "BatchDocs" >> beam.BatchElements(min_batch_size=16, max_batch_size=4096, element_size_fn=_kib)
        | "Chunk" >> beam.ParDo(ChunkDocuments(plan)).with_outputs(ERRORS, ChunkDocuments.INFO, main="segments")
    )
    segments = chunked.segments
    shared = _shared_segments(plan)
    if shared:
        segments = (segments, p | "SharedSegments" >> beam.Create(shared)) | "AllSegments" >> beam.Flatten()
    vectors = (
        segments
        | "Pack" >> beam.ParDo(PackSegments(plan.pack))
        | "Encode" >> beam.ml.inference.RunInference(handler)
        | "Unbatch" >> beam.FlatMap(lambda vs: vs)
    )
    shared_vectors = vectors | "SharedVectors" >> beam.Filter(lambda v: v.uid == SHARED_UID)
    by_doc = {
        "info": chunked[ChunkDocuments.INFO] | "InfoByDoc" >> beam.Map(lambda i: (i.doc_id, i)),
        "vec": vectors
        | "DocVectors" >> beam.Filter(lambda v: v.uid != SHARED_UID)
        | "VecByDoc" >> beam.Map(lambda v: (v.doc_id, v)),
        "committed": _committed_ids(p, plan),
    }
    assembled = (
        by_doc
        | "GroupByDoc" >> beam.CoGroupByKey()
        | "Assemble"
        >> beam.ParDo(Assemble(plan), beam.pvalue.AsList(shared_vectors)).with_outputs(
            ERRORS, Assemble.CHUNKS, Assemble.EXTRACTIONS, main="documents"
        )
    )
    errors = (parsed[ERRORS], chunked[ERRORS], assembled[ERRORS]) | "AllErrors" >> beam.Flatten()
    outputs = {
        "documents": assembled.documents,
        "chunks": assembled[Assemble.CHUNKS],
        "extractions": assembled[Assemble.EXTRACTIONS],
        "errors": errors,
    }
    _write(outputs, plan)
    return outputs


def _committed_ids(p: beam.Pipeline, plan: JobPlan) -> beam.PCollection:
    ids = p | "CommittedFiles" >> beam.Create(plan.committed_documents)
    if plan.committed_documents:
        ids = ids | "CommittedIds" >> beam.io.ReadAllFromParquet(columns=["doc_id"]) | beam.Map(lambda r: r["doc_id"])
    return ids | "CommittedById" >> beam.Map(lambda doc_id: (doc_id, True))


def _shared_segments(plan: JobPlan) -> list[Segment]:
    if not plan.extractors:
        return []
    tok, special = load_tokenizer(checkpoint_dir(plan.model_path))
    return [s for ex in plan.extractors for s in ex.shared_segments(tok, special, plan.windowing.max_seq_len)]


def _write(outputs: dict[str, beam.PCollection], plan: JobPlan) -> None:
    dim = plan.config.hidden
    out, name = plan.output.rstrip("/"), plan.file_prefix
    sinks.write_parquet(outputs["documents"], f"{out}/documents/{name}", sinks.documents_schema(dim), "Documents")
    sinks.write_parquet(outputs["chunks"], f"{out}/chunks/{name}", sinks.chunks_schema(dim), "Chunks")
    sinks.write_parquet(outputs["extractions"], f"{out}/extractions/{name}", sinks.EXTRACTIONS_SCHEMA, "Extractions")
    sinks.write_errors(outputs["errors"], f"{out}/errors/{name}")
