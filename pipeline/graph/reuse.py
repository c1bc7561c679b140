"""`--reuse PREVIOUS_OUTPUT`: documents whose doc_id and fingerprint match a row of the previous
run are copied from it instead of encoded.

Two Beam joins, both CoGroupByKey on doc_id, so they scale with the corpus:

    parsed documents + previous (doc_id, fingerprint) + ids committed by earlier waves
        -> Decide: the duplicate rule, then reuse (fingerprints match) or encode
    reused documents + previous documents/chunks/extractions rows
        -> Copy: the previous vectors and extractions; source, metadata and text from the new input

The encoder never encodes a reused document's windows. When only extractors differ from the previous
run's (`Reuse.run_kinds`), Copy copies the vectors and the unchanged extractors' rows, and runs
those extractors: text-only ones on the text, the others on the copied vectors with only their
candidates encoded (reuse_extract). Documents gone from the input are found by the
launcher after the run (previous ids minus this run's), across all waves.
"""

import json

import apache_beam as beam

from docbeam.pipeline.core import fingerprint, tables
from docbeam.pipeline.core.records import Document
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost.metering import StageMeter
from docbeam.pipeline.graph import reuse_extract
from docbeam.pipeline.graph.assemble import pages_of, pick_winner, section_of, written_earlier
from docbeam.pipeline.graph.job_plan import JobPlan


class Decide(beam.DoFn):
    """Per doc_id: reject duplicates, then copy (fingerprint unchanged) or encode."""

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.REUSE)
        reuse = self.plan.reuse
        # The previous documents' fingerprints hash the previous run's settings: this run's when
        # they are the same, else (only text-only extractors differ) the previous run's own.
        self.settings = None if not reuse.reuses_vectors else (reuse.previous_hash or self.plan.settings_hash)

    def process(self, item):
        doc_id, grouped = item
        docs = list(grouped["docs"])
        if not docs:  # a previous document gone from this input (or from this wave)
            return
        if list(grouped["committed"]):  # an earlier wave of this run wrote this doc_id
            for d in docs:
                self.meter.add(rejected=1)
                yield beam.pvalue.TaggedOutput(tables.ERRORS, written_earlier(d, doc_id))
            return
        kept, dupes = pick_winner(docs)
        for rej in dupes:
            self.meter.add(rejected=1)
            yield beam.pvalue.TaggedOutput(tables.ERRORS, rej)
        previous = list(grouped["previous"])
        self.meter.add(elements_in=1)
        if self.settings and previous and previous[0] == fingerprint.document(self.settings, kept.text):
            yield beam.pvalue.TaggedOutput(Stage.REUSE, (doc_id, kept))
        else:
            yield kept


class Copy(beam.DoFn):
    """A reused document's rows from the previous run, with this input's source and text; on
    CANDIDATES, the document and its copied vectors for the encoder extractors that run on it."""

    CANDIDATES = "candidates"

    def __init__(self, plan: JobPlan):
        self.plan = plan

    def setup(self):
        self.meter = StageMeter(Stage.REUSE)
        self.settings = self.plan.settings_hash
        reuse = self.plan.reuse
        keep = reuse.copy_kinds
        self.keep = None if keep is None else [ex for ex in self.plan.extractors if ex.name in keep]
        self.run = [ex for ex in self.plan.extractors if ex.name in reuse.run_kinds]
        self.encoded = bool(reuse_extract.encoded_extractors(self.plan))

    def process(self, item):
        doc_id, grouped = item
        docs = list(grouped["doc"])
        if not docs:
            return
        (doc,) = docs
        (old,) = list(grouped[tables.DOCUMENTS])
        text = None if self.plan.no_store_text else doc.text
        prov = doc.provenance
        row = {
            **old,
            "source": doc.source,
            "metadata": _metadata(doc),
            "text": text,
            "format": prov.format if prov else old.get("format"),
            # This run's settings: a later --reuse of this run compares against them.
            "fingerprint": fingerprint.document(self.settings, doc.text),
            "language": doc.language,  # a row from before the column has none
        }
        self.meter.add(elements_out=1, tokens=old["n_tokens"])
        yield row
        chunks = list(grouped[tables.CHUNKS])
        for c in chunks:
            yield beam.pvalue.TaggedOutput(
                tables.CHUNKS,
                {
                    **c,
                    "text": text[c["start_char"] : c["end_char"]] if text is not None else None,
                    **pages_of(prov, c["start_char"], c["end_char"]),
                    "section": section_of(prov, c["start_char"]),
                },
            )
        for e in grouped[tables.EXTRACTIONS]:
            if self.keep is None or any(ex.owns(e["kind"]) for ex in self.keep):
                yield beam.pvalue.TaggedOutput(tables.EXTRACTIONS, e)
        for ex in self.run:  # added or changed since the previous run: text-only ones' rows here
            for e in ex.text_rows(doc):
                yield beam.pvalue.TaggedOutput(tables.EXTRACTIONS, e)
        if self.encoded:
            yield beam.pvalue.TaggedOutput(self.CANDIDATES, reuse_extract.copied(doc, old, chunks))


def _metadata(doc: Document) -> str | None:
    return json.dumps(doc.metadata, sort_keys=True, default=str) if doc.metadata else None


def _read(p, name: str, files: list[str], columns: list[str] | None = None) -> beam.PCollection:
    rows = p | f"Previous{name}Files" >> beam.Create(files)
    if files:
        rows = rows | f"Previous{name}" >> beam.io.ReadAllFromParquet(columns=columns)
    return rows | f"Previous{name}ById" >> beam.Map(lambda r: (r["doc_id"], r))


def split(p: beam.Pipeline, docs: beam.PCollection, committed: beam.PCollection, plan: JobPlan):
    """(documents to encode, {table: copied rows}, errors, reused documents whose extractors
    need their candidates encoded) for a run with --reuse."""
    reuse = plan.reuse
    assert reuse is not None, "reuse.split: a plan without --reuse"
    previous = _read(p, "Fingerprints", reuse.documents, ["doc_id", "fingerprint"]) | beam.Map(
        lambda kv: (kv[0], kv[1]["fingerprint"])
    )
    decided = (
        {"docs": docs | "DocsById" >> beam.Map(lambda d: (d.doc_id, d)), "previous": previous, "committed": committed}
        | "GroupForReuse" >> beam.CoGroupByKey()
        | "Decide" >> beam.ParDo(Decide(plan)).with_outputs(tables.ERRORS, Stage.REUSE, main="encode")
    )
    copied = (
        {
            "doc": decided[Stage.REUSE],
            tables.DOCUMENTS: _read(p, "Documents", reuse.documents),
            tables.CHUNKS: _read(p, "Chunks", reuse.chunks),
            tables.EXTRACTIONS: _read(p, "Extractions", reuse.extractions),
        }
        | "GroupReused" >> beam.CoGroupByKey()
        | "Copy"
        >> beam.ParDo(Copy(plan)).with_outputs(
            tables.CHUNKS, tables.EXTRACTIONS, Copy.CANDIDATES, main=tables.DOCUMENTS
        )
    )
    rows = {t: copied[t] for t in (tables.DOCUMENTS, tables.CHUNKS, tables.EXTRACTIONS)}
    return decided.encode, rows, decided[tables.ERRORS], copied[Copy.CANDIDATES]
