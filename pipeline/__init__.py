"""docbeam's Beam layer: the only package that imports apache_beam.

options          DocbeamOptions: every docbeam flag, shared by `docbeam run` and `python -m pipeline.run`
documents        the records flowing through the job (Document, Segment, SegmentVector, Rejection)
parsers          bytes of one file -> Documents and Rejections, per format (pure)
chunking         Document -> token windows with character offsets (pure)
packing          Segments -> fixed-shape packed batches with segment ids (pure)
encoder_runtime  the encoder on this worker's devices: one executable per batch shape
inference        RunInference ModelHandler around the encoder runtime
extractors/      keyphrases, summary, labels, entities: plug-ins on the same encoder pass
assemble         per-document embedding, dedupe by doc_id (pure)
graph            the Beam graph: read -> parse -> chunk -> pack -> encode -> assemble -> sinks
sinks            output schemas and writers
storage          local and gs:// I/O outside Beam's sinks, one retry policy, checkpoint cache
outputs          reading a finished run's tables back
waves            committing outputs group of files by group, for --resume
manifest         the run manifest and the accounting check
metering         per-stage metrics; memwatch: memory drift
pricing, report  the price table and the cost report; estimate: project a whole input
runners          which Beam runner a job gets
run              the plain Beam entry point (python -m pipeline.run); finalize: after a detached job
submit           `docbeam submit` flags -> Dataflow options
cli              the `docbeam` command
"""
