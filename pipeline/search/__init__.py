"""`docbeam search`: a finished run's chunks ranked against a query, outside Beam.

- run_chunks: the run's manifest and chunk files, embeddings streamed in blocks (local or gs://)
- run_files: what search reads of a run it need not trust: regular files inside it, JSON bounded
- topk: exact top-k over blocks (pure numpy)
- query: the run's checkpoint, checked against its manifest, embedding queries as `docbeam embed`
- index, index_files: `docbeam index`, an approximate (FAISS IVF-Flat) index of a run's chunks,
  and its files under RUN/_index/ (used from core.flags.INDEX_FROM_ROWS chunks on while fresh);
  index_check: a chunks.faiss's headers and size, checked before faiss reads it
- hits: the pieces together; `search_hits(run, query, top_k)` returns what --json lists
- format: the console and JSON renderings
"""

from docbeam.pipeline.search.hits import HIT_KEYS, search_hits, search_vectors

__all__ = ["HIT_KEYS", "search_hits", "search_vectors"]
