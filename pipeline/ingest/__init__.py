"""Ingest: input files -> Documents (parse, one module per format) -> token windows (chunking)."""
