"""The Beam graph: the plan it runs (job_plan), one DoFn per stage (dofns), per-document assembly
(assemble), --reuse's joins (reuse), the entity branch (ner_branch), the Parquet and errors/ writers
(table_writers), the wiring (build), the runner (runners), the job that writes a run's chunks
to a --sink store (store_write), and the host pool that runs parse and chunk on every core of a
worker (host_pool, pooled_dofn)."""
