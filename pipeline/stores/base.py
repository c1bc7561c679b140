"""The record every `--sink` store holds, and the interface each store implements.

Rows become Beam ml.rag `Chunk`s (`to_chunk`), which ml.rag's own write transforms upsert
(`VectorStore.write_config` gives each store's ml.rag WriteConfig). ml.rag writers only upsert,
so what they cannot do goes through the store's own client: create the collection, list the
ids stored for some documents, delete ids, search.

Every store holds the same record per chunk:

    id           chunk_id(doc_id, chunk_index): a UUID (Qdrant takes only UUIDs or integers),
                 the same for a chunk in every run, so a rerun upserts instead of duplicating
    vector       the chunk's embedding (L2-normalised: inner product = cosine)
    text         the chunk's text; null with --no-store-text
    doc_id, chunk_index, page_start, page_end, section, metadata (the document's, as a dict)
    doc_key      hex hash of doc_id: a filter value that needs no quoting (Milvus filters are
                 strings, and a doc_id may hold any character)
"""

import hashlib
import json
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from apache_beam.ml.rag.types import Chunk, Content, Embedding

from docbeam.pipeline.core.sink_uri import SinkUri

_ID_SPACE = uuid.UUID("6f1c3b1e-9d0a-4c1e-8a55-d0cbea4d0c5a")  # docbeam's uuid5 namespace for chunk ids
FIELDS = ("doc_id", "chunk_index", "page_start", "page_end", "section", "metadata", "text")
BATCH_DOCS = 256  # documents per id look-up (a filter of this many keys)
BATCH_IDS = 1000  # ids per delete request


class StoreError(Exception):
    """A store that cannot take this run's chunks (its collection has another shape, or docbeam
    does not run its writer)."""


def chunk_id(doc_id: str, chunk_index: int) -> str:
    """The chunk's id in every store: stable across runs, unique per (doc_id, chunk_index)."""
    return str(uuid.uuid5(_ID_SPACE, json.dumps([doc_id, int(chunk_index)])))


def doc_key(doc_id: str) -> str:
    return hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def to_chunk(row: dict, doc_metadata: str | None, store_text: bool = True) -> Chunk:
    """A chunks/ row (and its document's metadata JSON) as an ml.rag Chunk."""
    text = row.get("text") if store_text else None
    meta = {
        "doc_id": row["doc_id"],
        "doc_key": doc_key(row["doc_id"]),
        "chunk_index": int(row["chunk_index"]),
        "page_start": row.get("page_start"),
        "page_end": row.get("page_end"),
        "section": row.get("section"),
        "metadata": json.loads(doc_metadata) if doc_metadata else None,
        "text": text,
    }
    return Chunk(
        content=Content(text=text),
        id=chunk_id(row["doc_id"], row["chunk_index"]),
        index=int(row["chunk_index"]),
        metadata=meta,
        embedding=Embedding(dense_embedding=[float(x) for x in row["embedding"]]),
    )


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    doc_id: str
    chunk_index: int
    score: float
    page: int | None
    section: str | None
    text: str | None

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


class VectorStore(ABC):
    """One store behind `--sink`: its ml.rag write config, and what its own client does that
    ml.rag's upserting writers cannot (sink_sync drives these in order, search reads)."""

    # Makes a Chunk fit the store's field limits before the write, in place; True when it cut
    # something. None: the store has no per-field limits.
    fit: Callable[[Chunk], bool] | None = None

    def __init__(self, sink: SinkUri):
        self.sink = sink
        self.collection = sink.collection

    @abstractmethod
    def client(self) -> Any:
        """A new client of the store's own library (closed by the caller)."""

    @abstractmethod
    def write_config(self, dim: int) -> Any:
        """ml.rag's VectorDatabaseWriteConfig for this store (`create_write_transform()`)."""

    @abstractmethod
    def ensure(self, dim: int) -> bool:
        """Create the collection if absent (True when it was created); StoreError for one that
        cannot take `dim`-dimensional vectors or lacks docbeam's fields."""

    @abstractmethod
    def ids_of(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """chunk id -> doc_id of every chunk stored for these documents."""

    @abstractmethod
    def _delete_batch(self, client: Any, ids: list[str]) -> None:
        """Delete at most BATCH_IDS ids through an open client."""

    @abstractmethod
    def query(self, vector: np.ndarray, top_k: int) -> list[Hit]:
        """The `top_k` chunks by inner product with `vector`, best first."""

    def delete(self, ids: list[str]) -> int:
        c = self.client()
        try:
            for batch in batches(ids, BATCH_IDS):
                self._delete_batch(c, batch)
        finally:
            c.close()
        return len(ids)
