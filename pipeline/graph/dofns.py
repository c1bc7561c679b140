"""The DoFns of a docbeam job, one per stage. Every DoFn meters its own stage
(cost.metering.StageMeter) and routes every rejection to errors/ with its reason."""

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core import fingerprint
from docbeam.pipeline.core.records import DocInfo, Document, Rejection, Segment, SegmentVector, Skipped, reject
from docbeam.pipeline.core.stages import SKIPPED_PREFIX, Stage, extract_stage
from docbeam.pipeline.core.tables import ERRORS
from docbeam.pipeline.cost.metering import StageMeter
from docbeam.pipeline.encode.packing import PackedBatch, Packer, PackSpec
from docbeam.pipeline.graph.assemble import AssembledDoc, assemble, pick_winner, written_earlier
from docbeam.pipeline.graph.job_plan import JobPlan
from docbeam.pipeline.ingest.chunking import DocChunks, Frame, chunk_documents
from docbeam.pipeline.ingest.parse import ParseConfig, format_of, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox
from docbeam.pipeline.ingest.sources import InputGlob, carried, in_a_run, name_of, printable, unreadable_name


def text_kib(doc: Document) -> int:
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


# (path, size in bytes, name: the path relative to its input's root); a path that is not
# UTF-8 travels as bytes, its name escaped (sources.carried), and is rejected by ParseFile.
File = tuple[str | bytes, int, str]


def beam_file(path: str, size: int, name: str) -> File:
    return carried(path), size, printable(name)


class MatchGlob(beam.DoFn):
    """An input glob -> its files. A folder input yields only files of formats docbeam reads
    (the rest are counted as skipped); a glob yields every file it matches."""

    def setup(self):
        self.meter = StageMeter(Stage.MATCH)

    def process(self, item: InputGlob) -> Iterator[File]:
        with self.meter.timed():
            found = sorted((m.path, m.size_in_bytes) for m in FileSystems.match([item.pattern])[0].metadata_list)
        if item.folder:
            kept = [(p, s) for p, s in found if format_of(p) and not in_a_run(p, item.root)]
            self.meter.add(skipped=len(found) - len(kept))
            found = kept
        self.meter.add(elements_in=1, elements_out=len(found), bytes_out=sum(s for _, s in found))
        for path, size in found:
            yield beam_file(path, size, name_of(path, item.root))


class KnownFile(beam.DoFn):
    """A file the launcher listed already: metered as matched, never globbed again."""

    def setup(self):
        self.meter = StageMeter(Stage.MATCH)

    def process(self, item: File) -> Iterator[File]:
        self.meter.add(elements_in=1, elements_out=1, bytes_out=item[1])
        yield item


class ParseFile(beam.DoFn):
    """Files -> Documents (and Rejections to errors/). Skipped records (a WARC's requests,
    images, redirects) are counted under the stage, per reason, and go nowhere. Each instance
    owns the sandbox its native parsers run in (one child process per Beam worker thread,
    started on first use), ended in teardown."""

    def __init__(self, cfg: ParseConfig):
        self.cfg = cfg

    def setup(self):
        self.meter = StageMeter(Stage.PARSE)
        self.sandbox = Sandbox(self.cfg.parse_timeout_s, self.cfg.parse_memory_mb)

    def teardown(self):
        self.sandbox.close()

    def process(self, item: File):
        path, size, name = item
        self.meter.add(elements_in=1, bytes_in=size)
        if isinstance(path, bytes):  # a name that is not UTF-8: one error line, the run goes on
            self.meter.add(rejected=1)
            yield beam.pvalue.TaggedOutput(ERRORS, unreadable_name(path, name, Stage.PARSE))
            return

        def open_file():
            # Uncompressed: docbeam decompresses itself, to cap gzip bombs and report truncation.
            return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)

        for group in timed_chunks(self.meter, parse_file(path, open_file, self.cfg, name, self.sandbox)):
            docs = [r for r in group if isinstance(r, Document)]
            skipped = Counter(r.reason for r in group if isinstance(r, Skipped))
            self.meter.add(  # one update per group, not per record: the meter is not free
                rejected=sum(isinstance(r, Rejection) for r in group),
                skipped=sum(skipped.values()),
                elements_out=len(docs),
                bytes_out=sum(len(d.text) for d in docs),
            )
            for reason, n in skipped.items():
                self.meter.count(f"skipped_{reason}", n)
            for kind in ("running_lines", "leader_lines"):  # PDF layout left out of the text
                if n := sum(getattr(d.provenance, kind) for d in docs if d.provenance):
                    self.meter.count(f"dropped_{kind}", n)
            for rec in group:
                if isinstance(rec, Rejection):
                    yield beam.pvalue.TaggedOutput(ERRORS, rec)
                elif isinstance(rec, Document):
                    yield rec


class ChunkDocuments(beam.DoFn):
    """Tokenise and window a batch of documents; add the extractors' candidate segments."""

    INFO = "info"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.CHUNK)
        self.ex_meters = {ex.name: StageMeter(extract_stage(ex.name)) for ex in self.plan.extractors}
        self.settings = self.plan.settings_hash
        self.tokenizer, self.special = load_tokenizer(self.plan.encoder.local_checkpoint())
        self.frame = self.plan.frame or Frame(self.special)

    def process(self, docs: list[Document]):
        self.meter.add(elements_in=len(docs), bytes_in=sum(len(d.text) for d in docs))
        with self.meter.timed():
            pairs = list(chunk_documents(docs, self.tokenizer, self.frame, self.plan.windowing))
        for doc, chunks in pairs:
            yield from self._one(doc, chunks)

    def _one(self, doc: Document, chunks: DocChunks):
        # The extractors' candidates first: the encoder work they add is then known to the
        # progress display while the chunks are still coming (they are yielded after them).
        extra, rows = [], []
        for ex in self.plan.extractors:
            if why := ex.skip_reason(doc):  # by design (keyphrases of Japanese): counted, said in the summary
                self.ex_meters[ex.name].count(f"{SKIPPED_PREFIX}{why}")
            with self.meter.timed():
                extra += ex.candidates(doc, self.tokenizer, self.special, self.plan.windowing.max_seq_len)
            # Rows read from the text (entities) are the extractor's output, timed and counted
            # under its own stage: the report's `out` for it is the rows it wrote.
            with self.ex_meters[ex.name].timed():
                mine = ex.text_rows(doc)
            if mine:
                self.ex_meters[ex.name].add(elements_out=len(mine))
            rows += mine
        candidate_tokens = sum(len(seg.ids) for seg in extra)
        self.meter.live(live_chars_started=len(doc.text), live_candidate_tokens=candidate_tokens)
        n_chunks, covered, counted = 0, 0, 0
        for group in timed_chunks(self.meter, chunks):
            # Progress inside the document, recorded before its windows go on to be encoded.
            self.meter.live(
                live_chars_chunked=group[-1].end_char - covered,
                live_chunk_tokens=sum(len(seg.ids) for seg in group),
                live_document_tokens=chunks.n_tokens - counted,
            )
            covered, counted = group[-1].end_char, chunks.n_tokens
            for seg in group:
                n_chunks += 1
                yield seg
        self.meter.live(live_chars_chunked=len(doc.text) - covered, live_document_tokens=chunks.n_tokens - counted)
        if n_chunks == 0:
            self.meter.live(live_candidate_tokens=-candidate_tokens)  # never encoded
            self.meter.add(rejected=1)
            yield beam.pvalue.TaggedOutput(
                ERRORS,
                reject(
                    Stage.CHUNK,
                    "no_tokens",
                    doc.source,
                    "text has no tokens for this model's tokenizer",
                    row=doc.row,
                    doc_id=doc.doc_id,
                ),
            )
            return
        yield from extra
        n_tokens = chunks.n_tokens
        self.meter.add(elements_out=n_chunks + len(extra), tokens=n_tokens)
        yield beam.pvalue.TaggedOutput(
            self.INFO,
            DocInfo(
                uid=doc.uid,
                doc_id=doc.doc_id,
                source=doc.source,
                row=doc.row,
                n_chars=len(doc.text),
                n_tokens=n_tokens,
                n_chunks=n_chunks,
                n_segments=n_chunks + len(extra),
                metadata=doc.metadata,
                extractions=tuple(rows),
                text=None if self.plan.no_store_text else doc.text,
                provenance=doc.provenance,
                fingerprint=fingerprint.document(self.settings, doc.text),
                language=doc.language,
            ),
        )


class PackSegments(beam.DoFn):
    """Bundle-scoped packer: full batches leave as soon as the pool allows; the rest at bundle end."""

    def __init__(self, spec: PackSpec):
        self.spec = spec

    def setup(self):
        self.meter = StageMeter(Stage.PACK)

    def start_bundle(self):
        self.packer = Packer(self.spec)

    def _count(self, batches):
        for b in batches:
            real = b.real_tokens
            self.meter.add(
                elements_in=len(b.slots),
                elements_out=1,
                tokens=real,
                pad_tokens=b.tokens.size - real,
                bytes_out=b.tokens.nbytes * 3,
            )
        return batches

    def process(self, seg: Segment):
        ready = self.packer.add(seg)  # most segments only join the pool: nothing to time or meter
        if ready:
            with self.meter.timed():
                ready = self._count(ready)
        yield from ready

    def finish_bundle(self):
        with self.meter.timed():
            ready = self._count(list(self.packer.flush()))
        for b in [*ready, PackedBatch.flush()]:  # the flush hands back the encoder's batch in flight
            yield GlobalWindows.windowed_value(b)


class Assemble(beam.DoFn):
    CHUNKS, EXTRACTIONS = "chunks", "extractions"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.ASSEMBLE)
        self.ex_meters = {ex.name: StageMeter(extract_stage(ex.name)) for ex in self.plan.extractors}

    def process(self, item, shared: list[SegmentVector]):
        doc_id, grouped = item
        infos, vectors = list(grouped["info"]), list(grouped["vec"])
        if not infos:  # a doc_id only an earlier wave has: nothing to do here
            return
        if list(grouped["committed"]):  # an earlier wave of this run already wrote this doc_id
            self.meter.add(elements_in=len(infos), rejected=len(infos))
            for info in infos:
                yield beam.pvalue.TaggedOutput(ERRORS, written_earlier(info, doc_id))
            return
        with self.meter.timed():
            kept, dupes = pick_winner(infos)
            result = assemble(kept, [v for v in vectors if v.uid == kept.uid], self.plan.model_name)
        failed = isinstance(result, Rejection)
        self.meter.add(
            elements_in=len(infos),
            rejected=len(dupes) + failed,
            elements_out=0 if failed else 1,
            tokens=0 if failed else kept.n_tokens,
        )
        for rej in dupes:
            yield beam.pvalue.TaggedOutput(ERRORS, rej)
        if isinstance(result, Rejection):
            yield beam.pvalue.TaggedOutput(ERRORS, result)
            return
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
