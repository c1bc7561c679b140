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
from docbeam.pipeline.core.vector_format import FLOAT32, INT8, VectorFormat, int8_steps

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

    # The --vector-dtype values this store keeps as they are (others: StoreError at launch).
    dtypes: tuple[str, ...] = (FLOAT32,)
    # int8: what the store holds is the code plus this (Qdrant keeps uint8: +128; Milvus int8: 0),
    # so a stored value v decodes to starts + (v + 128 - code_offset) * steps.
    code_offset = 0

    def __init__(self, sink: SinkUri, fmt: VectorFormat | None = None, ranges: np.ndarray | None = None):
        """`fmt`: the run's vectors (--dims, --vector-dtype; None: full float32, dimension as
        `ensure` is given); `ranges`: an int8 run's chunk calibration ranges (queries need them)."""
        self.sink = sink
        self.collection = sink.collection
        self.fmt = fmt
        self.ranges = ranges

    def vector_format(self, dim: "int | VectorFormat") -> VectorFormat:
        """The format of `dim`-dimensional vectors for this store, refused (StoreError) when the
        store does not keep its dtype."""
        fmt = dim if isinstance(dim, VectorFormat) else (self.fmt or VectorFormat(dim))
        if fmt.dtype not in self.dtypes:
            raise StoreError(f"{self.kind} keeps {', '.join(self.dtypes)} vectors, not {fmt.dtype} (--vector-dtype)")
        return fmt

    @property
    def kind(self) -> str:
        return type(self).__name__.removesuffix("Store")

    def query_vector(self, vector: np.ndarray) -> tuple[np.ndarray, float]:
        """(what to send the store, what to add to its scores) for a float32 query of the run's
        dimensions: int8 codes are scored against the query scaled by each dimension's bucket
        size, plus a constant: the float32 query . the dequantised chunk."""
        v = np.asarray(vector, np.float32)
        fmt = self.fmt
        if fmt is None or fmt.dtype != INT8 or self.ranges is None:
            return v, 0.0
        starts, steps = int8_steps(self.ranges)
        return v * steps, float(v @ (starts + (128 - self.code_offset) * steps))

    @abstractmethod
    def client(self) -> Any:
        """A new client of the store's own library (closed by the caller)."""

    @abstractmethod
    def write_config(self, dim: "int | VectorFormat") -> Any:
        """ml.rag's VectorDatabaseWriteConfig for this store (`create_write_transform()`)."""

    @abstractmethod
    def ensure(self, dim: "int | VectorFormat") -> bool:
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

    def after_write(self) -> None:  # noqa: B027 (most stores need nothing here)
        """Leave the collection as a client expects to find it (Milvus: loaded)."""

    def delete(self, ids: list[str]) -> int:
        c = self.client()
        try:
            for batch in batches(ids, BATCH_IDS):
                self._delete_batch(c, batch)
        finally:
            c.close()
        return len(ids)
