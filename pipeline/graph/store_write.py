"""The Beam job that writes a run's chunks to one `--sink` store through ml.rag's write transform.

    chunks/*.parquet + documents/*.parquet (doc_id, metadata)
        -> join on doc_id -> ml.rag Chunk (stores.base.to_chunk) -> VectorDatabaseWriteTransform

It runs after the run's waves have committed their Parquet, over the whole chunks/ folder:
Parquet is the record of the run, so a store that fails never costs the run its outputs, a
resumed run writes the waves committed before the crash too, and a retry of the whole job
is harmless (ml.rag's writers upsert by chunk id).
"""

from collections.abc import Callable

import apache_beam as beam
from apache_beam.ml.rag.ingestion.base import VectorDatabaseWriteTransform

from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost.metering import StageMeter, metered
from docbeam.pipeline.stores.base import to_chunk

CHUNK_COLUMNS = ["doc_id", "chunk_index", "embedding", "text", "page_start", "page_end", "section"]


class ToStoreChunks(beam.DoFn):
    """A document's chunk rows and its metadata -> ml.rag Chunks (the sink stage's metered work).
    `fit` makes a Chunk fit the store's field limits (True when it cut something: counted)."""

    def __init__(self, store_text: bool, fit: Callable | None = None):
        self.store_text = store_text
        self.fit = fit

    def setup(self):
        self.meter = StageMeter(Stage.SINK)

    @metered(inputs=None)
    def process(self, item):
        _, grouped = item
        meta = next(iter(grouped["metadata"]), None)
        rows = list(grouped["chunks"])
        self.meter.add(elements_in=len(rows))
        chunks = [to_chunk(r, meta, self.store_text) for r in rows]
        if self.fit is not None and (cut := sum(bool(self.fit(c)) for c in chunks)):
            self.meter.count("truncated", cut)
        yield from chunks


def build(
    p: beam.Pipeline,
    chunk_files: list[str],
    document_files: list[str],
    write_config,
    store_text: bool,
    fit: Callable | None = None,
):
    def read(name: str, files: list[str], columns: list[str]):
        pc = p | f"{name}Files" >> beam.Create(files)
        if files:
            pc = pc | f"Read{name}" >> beam.io.ReadAllFromParquet(columns=columns)
        return pc

    metadata = read("Documents", document_files, ["doc_id", "metadata"]) | beam.Map(
        lambda r: (r["doc_id"], r["metadata"])
    )
    chunks = read("Chunks", chunk_files, CHUNK_COLUMNS) | "ChunksById" >> beam.Map(lambda r: (r["doc_id"], r))
    return (
        {"metadata": metadata, "chunks": chunks}
        | "ByDoc" >> beam.CoGroupByKey()
        | "ToChunks" >> beam.ParDo(ToStoreChunks(store_text, fit))
        | "WriteStore" >> VectorDatabaseWriteTransform(write_config)
    )
