"""Before a job starts: flags -> plan, the checks before Beam and JAX load, the model's languages."""
