"""The Beam graph of one docbeam job.

    inputs -> match -> parse -> tokenize+chunk (+ extraction candidates) -> pack -> encode
          -> group by doc_id -> assemble (+ extractions) -> Parquet / JSONL sinks

The stages are in dofns.py; this file only wires them. Nothing is dropped silently: every
rejection joins errors/.
"""

import apache_beam as beam
from apache_beam.ml.inference.base import RunInference

from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core import tables
from docbeam.pipeline.core.records import Segment
from docbeam.pipeline.core.tables import ERRORS
from docbeam.pipeline.encode.handler import EncoderHandler
from docbeam.pipeline.graph import ner_branch, reuse, reuse_extract, table_writers, vector_output
from docbeam.pipeline.graph.dofns import (
    Assemble,
    ChunkDocuments,
    KnownFile,
    MatchGlob,
    PackSegments,
    ParseFile,
    VectorsByDoc,
    beam_file,
    text_kib,
)
from docbeam.pipeline.graph.job_plan import JobPlan


def build(p: beam.Pipeline, plan: JobPlan, handler: EncoderHandler | None = None) -> dict[str, beam.PCollection]:
    """Wire the job into `p`; returns the output PCollections by table name.
    `handler` replaces the encoder's ModelHandler (tests use it to inject faults)."""
    handler = handler or EncoderHandler(plan.encoder)
    if plan.files is None:
        files = p | "Inputs" >> beam.Create(plan.inputs) | "Match" >> beam.ParDo(MatchGlob())
    else:
        listed = [beam_file(*f) for f in plan.files]
        files = p | "Files" >> beam.Create(listed) | "Listed" >> beam.ParDo(KnownFile())
    files = files | "SpreadFiles" >> beam.Reshuffle()
    parsed = files | "Parse" >> beam.ParDo(ParseFile(plan.parse, plan.host_processes)).with_outputs(ERRORS, main="docs")
    committed = _committed_ids(p, plan)
    docs, copied, errors, again = parsed.docs, {}, [parsed[ERRORS]], None
    if plan.reuse is not None:
        docs, copied, reuse_errors, reused = reuse.split(p, docs, committed, plan)
        errors.append(reuse_errors)
        if reuse_extract.encoded_extractors(plan):  # their candidates join the encoder pass
            again = reused | "ReusedCandidates" >> beam.ParDo(reuse_extract.Candidates(plan)).with_outputs(
                reuse_extract.Candidates.INFO, main="segments"
            )
    chunked = (
        docs
        # Batches for the tokenizer, sized by text (KiB), not count: 256 documents of 64 MiB
        # each would otherwise sit in memory together. Handed to a host pool, smaller: the pool's
        # processes share out the batches, not a batch.
        | "BatchDocs"
        >> beam.BatchElements(
            min_batch_size=16, max_batch_size=4096 if plan.host_processes == 1 else 256, element_size_fn=text_kib
        )
        | "Chunk" >> beam.ParDo(ChunkDocuments(plan)).with_outputs(ERRORS, ChunkDocuments.INFO, main="segments")
    )
    segments = chunked.segments  # lists of segments
    if again is not None:
        segments = (segments, again.segments) | "WithReusedCandidates" >> beam.Flatten()
    shared = _shared_segments(plan)
    if shared:
        segments = (segments, p | "SharedSegments" >> beam.Create([shared])) | "AllSegments" >> beam.Flatten()
    vectors = (
        segments
        | "Pack" >> beam.ParDo(PackSegments(plan.pack))
        | "Encode" >> RunInference(handler)
        | "VecByDoc" >> beam.ParDo(VectorsByDoc()).with_outputs(VectorsByDoc.SHARED, main="by_doc")
    )
    shared_vectors = vectors[VectorsByDoc.SHARED]
    by_doc = {
        "info": chunked[ChunkDocuments.INFO] | "InfoByDoc" >> beam.Map(lambda i: (i.doc_id, i)),
        "vec": vectors.by_doc,  # (doc_id, [vectors]) per document and encoded batch
        "committed": committed,
    }
    if again is not None:
        by_doc["reused"] = again[reuse_extract.Candidates.INFO]
    grouped = by_doc | "GroupByDoc" >> beam.CoGroupByKey()
    assembled = grouped | "Assemble" >> beam.ParDo(Assemble(plan), beam.pvalue.AsList(shared_vectors)).with_outputs(
        ERRORS, Assemble.CHUNKS, Assemble.EXTRACTIONS, main="documents"
    )
    outputs = {
        tables.DOCUMENTS: assembled.documents,
        tables.CHUNKS: assembled[Assemble.CHUNKS],
        tables.EXTRACTIONS: ner_branch.with_entities(assembled[Assemble.EXTRACTIONS], docs, assembled.documents, plan),
    }
    if again is not None:  # rows of the extractors run on reused documents' copied vectors
        extracted = grouped | "ExtractReused" >> beam.ParDo(
            reuse_extract.Extract(plan), beam.pvalue.AsList(shared_vectors)
        )
        copied = {
            **copied,
            tables.EXTRACTIONS: (copied[tables.EXTRACTIONS], extracted) | "ReusedExtractions" >> beam.Flatten(),
        }
    # Encoded and copied rows together, the vectors as --dims/--vector-dtype store them.
    outputs = vector_output.shaped(outputs, copied, plan)
    outputs[ERRORS] = (*errors, chunked[ERRORS], assembled[ERRORS]) | "AllErrors" >> beam.Flatten()
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
    tok, special = load_tokenizer(plan.encoder.local_checkpoint())
    return [s for ex in plan.extractors for s in ex.shared_segments(tok, special, plan.windowing.max_seq_len)]


def _write(outputs: dict[str, beam.PCollection], plan: JobPlan) -> None:
    out, name = plan.output, plan.file_prefix
    schemas = {**tables.schemas_for(plan.vector_format), tables.EXTRACTIONS: tables.EXTRACTIONS_SCHEMA}
    for table, schema in schemas.items():
        table_writers.write_parquet(outputs[table], tables.file_prefix(out, table, name), schema, table.capitalize())
    table_writers.write_errors(outputs[ERRORS], tables.file_prefix(out, ERRORS, name))
