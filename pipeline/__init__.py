"""docbeam's Beam layer: the only package that imports apache_beam.

Sub-packages, lowest first; imports only point down (tests/test_layers.py keeps it so):

core/        records, flags, output tables, hardware catalogue: no Beam, no JAX
io/          single objects on local disk or gs:// (one retry policy), checkpoints, reading outputs back
ingest/      input files -> Documents (one module per format) -> token windows (chunking)
cost/        per-stage metering, memory drift, prices, the cost report
stores/      the vector stores of --sink: one module per store behind one interface (base.VectorStore)
encode/      packing into fixed-shape batches, the JAX encoder runtime, the RunInference handler
extractors/  keyphrases, summary, labels, entities: plug-ins on the same encoder pass
graph/       the Beam graph: plan, DoFns per stage, assembly, table writers, runner choice
search/      `docbeam search` and `docbeam index` over a finished run
launch/      running a job (flags -> plan -> waves -> manifest), planning, display, the other
             commands, the steps after a run

Entry points: cli (`docbeam`), run (`python -m docbeam.pipeline.run`), finalize (`python -m docbeam.pipeline.finalize`),
and `docbeam.pipeline.embed(texts, model=...)`: vectors for queries, computed as the pipeline computes them.
"""


def __getattr__(attr: str):
    # Loaded on first use: `import docbeam.pipeline.core...` must not load JAX (the command line checks
    # flags before JAX and Beam load).
    if attr == "embed":
        from docbeam.pipeline.encode.embed import embed

        return embed
    raise AttributeError(f"module 'docbeam.pipeline' has no attribute {attr!r}")
