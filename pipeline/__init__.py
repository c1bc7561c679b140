"""docbeam's Beam layer: the only package that imports apache_beam.

options      DocbeamOptions: every docbeam flag, shared by `docbeam run` and `python -m pipeline.run`
documents    the records flowing through the job (Document, Segment, SegmentVector, Rejection)
parsers      bytes of one file -> Documents and Rejections, per format (pure)
chunking     Document -> token windows with character offsets (pure)
packing      Segments -> fixed-shape packed batches with segment ids (pure)
inference    RunInference ModelHandler around the JAX encoder
assemble     per-document embedding, dedupe by doc_id (pure)
graph        the Beam graph: read -> parse -> chunk -> pack -> encode -> assemble -> sinks
sinks        output schemas and writers
manifest     the run manifest and the accounting check
metering     per-stage metrics
run          the plain Beam entry point (python -m pipeline.run)
cli          the `docbeam` command
"""
