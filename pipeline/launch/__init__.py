"""Launching a job, in five groups:

running/     one job from flags to manifest: job (the driver), waves (commit by groups of files),
             execute (one Beam job), options (docbeam's flags as Beam options), run_folder (what
             may be written and deleted under --output)
planning/    before anything starts: planner (flags -> plan), preflight (local checks before Beam
             and JAX load), model_languages (what the model was trained for)
display/     what a person sees: console (logs, summary, exit status), progress_display
commands/    the other commands: estimate, submit, compile_check, dataflow_finish
after_run/   steps once the outputs are committed: manifest (and the accounting check),
             sink_sync (--sink), latest (the _latest pointer)
"""
