"""The commands besides run: estimate, submit, compile (compile_check), finishing a Dataflow run."""
