"""The DoFns of a docbeam job, one per stage. Every DoFn meters its own stage
(cost.metering.metered) and routes every rejection to errors/ with its reason."""

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import TypeVar

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.transforms.window import GlobalWindows

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core import fingerprint
from docbeam.pipeline.core.records import DocInfo, Document, Rejection, Segment, SegmentVector, Skipped, reject
from docbeam.pipeline.core.stages import SKIPPED_PREFIX, Stage, extract_stage
from docbeam.pipeline.core.tables import ERRORS
from docbeam.pipeline.cost.metering import StageMeter, metered
from docbeam.pipeline.encode.packing import PackedBatch, Packer, PackSpec
from docbeam.pipeline.extractors import SHARED_UID
from docbeam.pipeline.graph.assemble import AssembledDoc, assemble, pick_winner, written_earlier
from docbeam.pipeline.graph.job_plan import JobPlan
from docbeam.pipeline.graph.pooled_dofn import HostPooled
from docbeam.pipeline.ingest.chunking import DocChunks, Frame, chunk_documents
from docbeam.pipeline.ingest.parse import ParseConfig, format_of, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox
from docbeam.pipeline.ingest.sources import (
    InputGlob,
    carried,
    folder_links_outside,
    in_a_run,
    name_of,
    printable,
    unreadable_name,
)


def text_kib(doc: Document) -> int:
    return max(1, len(doc.text) >> 10)


def text_size(doc: Document) -> int:
    return len(doc.text)


T = TypeVar("T")


def batched(items: Iterable[T], size: int = 64) -> Iterator[list[T]]:
    """Items in groups of `size` (itertools.batched from Python 3.12)."""
    it = iter(items)
    while group := list(itertools.islice(it, size)):
        yield group


# (path, size in bytes, name: the path relative to its input's root); a path that is not
# UTF-8 travels as bytes, its name escaped (sources.carried), and is rejected by ParseFile.
File = tuple[str | bytes, int, str]


def beam_file(path: str, size: int, name: str) -> File:
    return carried(path), size, printable(name)


def file_size(item: File) -> int:
    return item[1]


class MatchGlob(beam.DoFn):
    """An input glob -> its files. A folder input yields only files of formats docbeam reads
    (the rest are counted as skipped); a glob yields every file it matches. Links to folders
    outside the input come too, for ParseFile to skip and count (sources.folder_links_outside)."""

    def setup(self):
        self.meter = StageMeter(Stage.MATCH)

    @metered(bytes_out=file_size)
    def process(self, item: InputGlob) -> Iterator[File]:
        found = sorted((m.path, m.size_in_bytes) for m in FileSystems.match([item.pattern])[0].metadata_list)
        if item.folder:
            kept = [(p, s) for p, s in found if format_of(p) and not in_a_run(p, item.root)]
            self.meter.add(skipped=len(found) - len(kept))
            found = kept
        found += [(path, 0) for path in folder_links_outside(item)]
        for path, size in found:
            yield beam_file(path, size, name_of(path, item.root))


class KnownFile(beam.DoFn):
    """A file the launcher listed already: metered as matched, never globbed again."""

    def setup(self):
        self.meter = StageMeter(Stage.MATCH)

    @metered(bytes_out=file_size)
    def process(self, item: File) -> Iterator[File]:
        yield item


class ParseFile(HostPooled):
    """Files -> Documents (and Rejections to errors/). Skipped records (a WARC's requests,
    images, redirects) are counted under the stage, per reason, and go nowhere. Each instance
    owns the sandbox its native parsers run in (one child process per Beam worker thread or
    host-pool process, started on first use), ended in teardown."""

    def __init__(self, cfg: ParseConfig, processes: int = 1):
        self.cfg = cfg
        self.processes = processes

    def setup_work(self):
        self.meter = StageMeter(Stage.PARSE)
        self.sandbox = Sandbox(self.cfg.parse_timeout_s, self.cfg.parse_memory_mb)

    def teardown(self):
        if sandbox := getattr(self, "sandbox", None):
            sandbox.close()

    @metered(bytes_in=file_size, bytes_out=text_size, done="live_files_read")
    def work(self, item: File):
        path, _, name = item
        if isinstance(path, bytes):  # a name that is not UTF-8: one error line, the run goes on
            yield beam.pvalue.TaggedOutput(ERRORS, unreadable_name(path, name, Stage.PARSE))
            return

        def open_file():
            # Uncompressed: docbeam decompresses itself, to cap gzip bombs and report truncation.
            return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)

        for group in batched(parse_file(path, open_file, self.cfg, name, self.sandbox)):
            self._count_left_out(group)
            for rec in group:
                if isinstance(rec, Rejection):
                    yield beam.pvalue.TaggedOutput(ERRORS, rec)
                elif isinstance(rec, Document):
                    yield rec

    def _count_left_out(self, group: list) -> None:
        """Skipped records per reason, and layout lines left out of the text: one update per
        group, not per record (the meter is not free)."""
        skipped = Counter(r.reason for r in group if isinstance(r, Skipped))
        self.meter.add(skipped=sum(skipped.values()))
        for reason, n in skipped.items():
            self.meter.count(f"skipped_{reason}", n)
        for kind in ("running_lines", "leader_lines", "markup_lines"):
            if n := sum(getattr(r.provenance, kind) for r in group if isinstance(r, Document) and r.provenance):
                self.meter.count(f"dropped_{kind}", n)


class ChunkDocuments(HostPooled):
    """Tokenise and window a batch of documents; add the extractors' candidate segments. The
    segments leave in lists (a document's windows up to 64 at a time, then its candidates): a
    Beam element costs the runner more than packing a segment does, and a document has ~2."""

    INFO = "info"

    def __init__(self, plan: JobPlan):
        self.plan = plan
        self.processes = plan.host_processes

    def setup_work(self):
        self.meter = StageMeter(Stage.CHUNK)
        self.ex_meters = {ex.name: StageMeter(extract_stage(ex.name)) for ex in self.plan.extractors}
        self.settings = self.plan.settings_hash
        self.tokenizer, self.special = load_tokenizer(self.plan.encoder.local_checkpoint())
        self.frame = self.plan.frame or Frame(self.special)

    @metered(inputs="batch", bytes_in=text_size, items_out=len)  # elements_out: segments
    def work(self, docs: list[Document]):
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
            extra += ex.candidates(doc, self.tokenizer, self.special, self.plan.windowing.max_seq_len)
            # Rows read from the text (entities) are the extractor's output, timed and counted
            # under its own stage: the report's `out` for it is the rows it wrote.
            rows += self.ex_meters[ex.name].counted(lambda ex=ex: ex.text_rows(doc))
        candidate_tokens = sum(len(seg.ids) for seg in extra)
        self.meter.live(live_chars_started=len(doc.text), live_candidate_tokens=candidate_tokens)
        n_chunks, covered, counted = 0, 0, 0
        for group in batched(chunks):
            # Progress inside the document, recorded before its windows go on to be encoded.
            self.meter.live(
                live_chars_chunked=group[-1].end_char - covered,
                live_chunk_tokens=sum(len(seg.ids) for seg in group),
                live_document_tokens=chunks.n_tokens - counted,
            )
            covered, counted = group[-1].end_char, chunks.n_tokens
            n_chunks += len(group)
            yield group
        self.meter.live(live_chars_chunked=len(doc.text) - covered, live_document_tokens=chunks.n_tokens - counted)
        if n_chunks == 0:
            self.meter.live(live_candidate_tokens=-candidate_tokens)  # never encoded
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
        if extra:
            yield extra
        n_tokens = chunks.n_tokens
        self.meter.add(tokens=n_tokens)
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

    @metered(inputs=None, bytes_out=lambda b: b.tokens.nbytes * 3)
    def _batches(self, batches: Iterable[PackedBatch]) -> Iterator[PackedBatch]:
        for b in batches:
            real = b.real_tokens
            self.meter.add(elements_in=len(b.slots), tokens=real, pad_tokens=b.tokens.size - real)
            yield b

    def process(self, segs: list[Segment] | Segment):
        for seg in segs if isinstance(segs, list) else [segs]:  # ChunkDocuments' lists, NerWindows' one
            ready = self.packer.add(seg)  # most segments only join the pool: nothing to time or meter
            if ready:
                yield from self._batches(ready)

    def finish_bundle(self):
        for b in [*self._batches(list(self.packer.flush())), PackedBatch.flush()]:
            yield GlobalWindows.windowed_value(b)  # the flush hands back the encoder's batch in flight


class VectorsByDoc(beam.DoFn):
    """An encoded batch's vectors -> (doc_id, [its vectors in this batch]) per document, and
    the extractors' shared vectors (SHARED_UID) one by one on SHARED: one Beam element per
    document and batch where one per vector went through unbatching, two filters, a keying
    Map and the group (~2 hops of the runner per chunk)."""

    SHARED = "shared"

    def process(self, vectors: list[SegmentVector]):
        by_doc: dict[str, list[SegmentVector]] = {}
        for v in vectors:
            if v.uid == SHARED_UID:
                yield beam.pvalue.TaggedOutput(self.SHARED, v)
            else:
                by_doc.setdefault(v.doc_id, []).append(v)
        yield from by_doc.items()


class Assemble(beam.DoFn):
    CHUNKS, EXTRACTIONS = "chunks", "extractions"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.ASSEMBLE)
        self.ex_meters = {ex.name: StageMeter(extract_stage(ex.name)) for ex in self.plan.extractors}

    @metered(inputs=None)
    def process(self, item, shared: list[SegmentVector]):
        doc_id, grouped = item
        infos, vectors = list(grouped["info"]), [v for part in grouped["vec"] for v in part]
        if not infos:  # a doc_id only an earlier wave has: nothing to do here
            return
        self.meter.add(elements_in=len(infos))
        if list(grouped["committed"]):  # an earlier wave of this run already wrote this doc_id
            for info in infos:
                yield beam.pvalue.TaggedOutput(ERRORS, written_earlier(info, doc_id))
            return
        kept, dupes = pick_winner(infos)
        result = assemble(kept, [v for v in vectors if v.uid == kept.uid], self.plan.model_name)
        for rej in dupes:
            yield beam.pvalue.TaggedOutput(ERRORS, rej)
        if isinstance(result, Rejection):
            yield beam.pvalue.TaggedOutput(ERRORS, result)
            return
        self.meter.add(tokens=kept.n_tokens)
        yield result.document
        for c in result.chunks:
            yield beam.pvalue.TaggedOutput(self.CHUNKS, c)
        for r in list(kept.extractions) + self._extract(kept, result, shared):
            yield beam.pvalue.TaggedOutput(self.EXTRACTIONS, r)

    def _extract(self, info: DocInfo, result: AssembledDoc, shared: list[SegmentVector]) -> list[dict]:
        rows = []
        for ex in self.plan.extractors:

            def work(ex=ex) -> list[dict]:
                mine = [v for v in result.others if v.kind == ex.name]
                chunks = [c["embedding"] for c in result.chunks]
                return ex.extract(
                    info, result.document["embedding"], mine, [v for v in shared if v.kind == ex.name], chunks
                )

            rows += self.ex_meters[ex.name].counted(work, inputs=1)
        return rows
