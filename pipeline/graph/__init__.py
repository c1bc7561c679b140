"""The Beam graph: the plan it runs (plan), one DoFn per stage (dofns), per-document
assembly (assemble), the sinks (sinks), the wiring (build) and the runner (runners)."""
