"""Launching a job: flags -> plan (plan), waves of Beam jobs and their commits (job, waves),
the manifest and accounting check (manifest), budget projection (estimate), Dataflow
submission (submit) and finishing a detached Dataflow run (finalize)."""
