"""Steps after a run's outputs are committed: the manifest and accounting check, --sink, _latest."""
