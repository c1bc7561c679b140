"""Milvus: Milvus Lite for a local .db file (`milvus:///path/to.db`), or a server."""

import json
import logging
import os
from collections.abc import Iterable

import numpy as np
from apache_beam.ml.rag.types import Chunk

from docbeam.pipeline.core.sink_uri import SinkUri
from docbeam.pipeline.core.vector_format import BINARY, FLOAT16, FLOAT32, INT8, VectorFormat, quantize
from docbeam.pipeline.stores.base import BATCH_DOCS, FIELDS, Hit, StoreError, VectorStore, batches, doc_key

# Milvus's limits (milvus.io docs, "String Field" and "JSON Field"): a VARCHAR holds at most
# max_length BYTES of UTF-8 (Milvus Lite 3.2 counts characters, a server counts bytes: capping
# bytes fits both), a JSON value at most 65,536 bytes. One [UNK] token can span a whole base64
# blob, so a chunk's text can exceed them, and one such row fails the whole batch on every retry.
MILVUS_VARCHAR_BYTES = 65535  # docbeam's schema: doc_id, section, text
MILVUS_JSON_BYTES = 65536


def cut_utf8(text: str, max_bytes: int) -> str:
    """`text` cut to at most `max_bytes` of UTF-8, at a character boundary."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", "ignore")


def fit_milvus(chunk: Chunk) -> bool:
    """Make a chunk fit docbeam's Milvus schema, in place: text, doc_id and section cut to
    MILVUS_VARCHAR_BYTES, metadata over MILVUS_JSON_BYTES stored as null (doc_key, from the whole
    doc_id, still finds the chunk). True when something was cut."""
    m = chunk.metadata
    cut = False
    for name in ("text", "doc_id", "section"):
        value = m.get(name)
        if isinstance(value, str):
            fitted = cut_utf8(value, MILVUS_VARCHAR_BYTES)
            if fitted != value:
                m[name], cut = fitted, True
    if m.get("metadata") is not None and len(json.dumps(m["metadata"]).encode()) > MILVUS_JSON_BYTES:
        m["metadata"], cut = None, True  # json.dumps escapes non-ASCII: an upper bound on the size
    if cut and chunk.content.text is not None:
        chunk.content.text = m.get("text")
    return cut


def _not_milvus_lite_noise(record: logging.LogRecord) -> bool:
    # Milvus Lite (3.2) serves gRPC in this process and lacks AllocTimestamp, which pymilvus 3
    # calls to start a query iterator; it then falls back to a client-side timestamp, which
    # suits a single-process store. The traceback and the warning say nothing to act on.
    message = record.getMessage()
    return "Method not implemented" not in message and "failed to get mvccTs" not in message


# A Milvus server's vector types per --vector-dtype (Milvus 2.6: FLOAT16_VECTOR, INT8_VECTOR,
# BINARY_VECTOR with Hamming distance). Milvus Lite 3.2 keeps FLOAT_VECTOR only (it says so
# when asked for another): a local .db takes float32 runs (any --dims) and refuses the others.
VECTOR_TYPES = {FLOAT32: "FLOAT_VECTOR", FLOAT16: "FLOAT16_VECTOR", INT8: "INT8_VECTOR", BINARY: "BINARY_VECTOR"}
METRICS = {BINARY: "HAMMING"}  # the rest: inner product
PYTHON_VALUES = {  # a stored vector (the Parquet column's values) as pymilvus takes it
    FLOAT32: lambda v: [float(x) for x in v],
    FLOAT16: lambda v: np.asarray(v, np.float16),
    INT8: lambda v: np.asarray(v, np.int8),
    BINARY: lambda v: bytes(np.asarray(v, np.uint8)),
}


class MilvusStore(VectorStore):
    fit = staticmethod(fit_milvus)  # applied to each Chunk before the write (graph.store_write)

    def __init__(self, sink: SinkUri, fmt: VectorFormat | None = None, ranges=None):
        super().__init__(sink, fmt, ranges)
        self.dtypes = (FLOAT32,) if sink.local else tuple(VECTOR_TYPES)
        for name in ("grpc._server", "pymilvus.client.iterator.query_iterator"):
            logger = logging.getLogger(name)
            if _not_milvus_lite_noise not in logger.filters:
                logger.addFilter(_not_milvus_lite_noise)
        # Milvus Lite logs each failure to start with its traceback, then raises it to us, where
        # it becomes the one line naming --sink: the traceback would only bury that line.
        logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)

    def _connection(self) -> dict:
        s = self.sink
        if s.local:
            return {"uri": s.path}
        scheme = "https" if s.params.get("https") in ("1", "true") else "http"
        conn = {
            "uri": f"{scheme}://{s.host}:{s.port or 19530}",
            "db_name": s.params.get("db", "default"),
            "timeout": float(s.params.get("timeout", 10)),  # seconds to connect: an unreachable store answers soon
        }
        if s.user:
            conn.update(user=s.user, password=s.secrets.get("password", ""))
        if "token" in s.secrets:
            conn["token"] = s.secrets["token"]
        return conn

    def client(self):
        from pymilvus import MilvusClient

        if self.sink.local and os.path.exists(self.sink.path) and not os.path.isdir(self.sink.path):
            raise StoreError(f"{self.sink.path} is a file: Milvus Lite keeps its database as a folder of that name")
        return MilvusClient(**self._connection())

    def write_config(self, dim: "int | VectorFormat"):
        """ml.rag's Milvus writer config: one column per field of the record."""
        from apache_beam.ml.rag.ingestion.jdbc_common import WriteConfig
        from apache_beam.ml.rag.ingestion.milvus_search import MilvusVectorWriterConfig, MilvusWriteConfig
        from apache_beam.ml.rag.ingestion.postgres_common import ColumnSpec
        from apache_beam.ml.rag.utils import MilvusConnectionParameters

        conn = self._connection()
        as_stored = PYTHON_VALUES[self.vector_format(dim).dtype]
        specs = [
            ColumnSpec("id", str, lambda c: c.id),
            ColumnSpec("embedding", list, lambda c: as_stored(c.dense_embedding or [])),
            ColumnSpec("doc_key", str, lambda c: c.metadata["doc_key"]),
            *[ColumnSpec(f, object, _field(f)) for f in FIELDS],
        ]
        return MilvusVectorWriterConfig(
            connection_params=MilvusConnectionParameters(**conn),
            write_config=MilvusWriteConfig(
                collection_name=self.collection, write_config=WriteConfig(write_batch_size=500)
            ),
            column_specs=specs,
        )

    def ensure(self, dim: "int | VectorFormat") -> bool:
        """Create the collection if absent (True when it was created); refuse one whose vectors
        have another dimension or type, or that lacks docbeam's fields. The collection is loaded
        (searchable by a plain client query) when this returns."""
        from pymilvus import DataType, MilvusClient

        asked = dim if isinstance(dim, VectorFormat) else (self.fmt or VectorFormat(dim))
        if self.sink.local and asked.dtype != FLOAT32:
            raise StoreError(
                f"Milvus Lite keeps float32 vectors only (--dims works); "
                f"--vector-dtype {asked.dtype} needs a Milvus server"
            )
        fmt = self.vector_format(dim)
        dim, vector_type = fmt.dim, getattr(DataType, VECTOR_TYPES[fmt.dtype])
        c = self.client()
        try:
            if c.has_collection(self.collection):
                info = c.describe_collection(self.collection)
                fields = {f["name"]: f for f in info["fields"]}
                have = fields.get("embedding", {}).get("params", {}).get("dim")
                if have is not None and int(have) != dim:
                    raise StoreError(
                        f"collection {self.collection} holds {have}-dimensional vectors; this run's are {dim}"
                    )
                kept = fields.get("embedding", {}).get("type")
                if kept is not None and kept != vector_type:
                    raise StoreError(
                        f"collection {self.collection} holds {kept.name} vectors; this run's are {vector_type.name}"
                    )
                missing = [f for f in ("id", "embedding", "doc_key", *FIELDS) if f not in fields]
                if missing:
                    raise StoreError(f"collection {self.collection} lacks the fields {', '.join(missing)}")
                if self.sink.local and c.list_indexes(self.collection):
                    # An earlier docbeam's Lite collection, made with a FLAT index: Milvus Lite 3.2
                    # opens an indexed collection released in every new process (a plain query then
                    # fails with code 101), an unindexed one loaded. FLAT was exact: so is no index.
                    c.release_collection(self.collection)
                    for name in c.list_indexes(self.collection):
                        c.drop_index(self.collection, name)
                c.load_collection(self.collection)
                return False
            schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=36)
            schema.add_field("embedding", vector_type, dim=dim)
            schema.add_field("doc_key", DataType.VARCHAR, max_length=32)
            schema.add_field("doc_id", DataType.VARCHAR, max_length=MILVUS_VARCHAR_BYTES)
            schema.add_field("chunk_index", DataType.INT64)
            schema.add_field("page_start", DataType.INT32, nullable=True)
            schema.add_field("page_end", DataType.INT32, nullable=True)
            schema.add_field("section", DataType.VARCHAR, max_length=MILVUS_VARCHAR_BYTES, nullable=True)
            schema.add_field("metadata", DataType.JSON, nullable=True)
            schema.add_field("text", DataType.VARCHAR, max_length=MILVUS_VARCHAR_BYTES, nullable=True)
            if self.sink.local:
                # Milvus Lite: no index. It searches an unindexed collection exactly, and opens it
                # loaded in every process (an indexed one starts released in each new process,
                # where a plain client query fails with code 101 until load_collection).
                c.create_collection(self.collection, schema=schema, consistency_level="Strong")
                c.load_collection(self.collection)
                return True
            index = c.prepare_index_params()
            # FLAT: exact inner product, so the store's top-k is the Parquet output's top-k.
            metric = METRICS.get(fmt.dtype, "IP")
            index.add_index("embedding", index_type="BIN_FLAT" if fmt.dtype == BINARY else "FLAT", metric_type=metric)
            index.add_index("doc_key", index_type="INVERTED")
            c.create_collection(self.collection, schema=schema, index_params=index, consistency_level="Strong")
            c.load_collection(self.collection)  # a client's plain query works without load_collection first
            return True
        finally:
            c.close()

    def ids_of(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """chunk id -> doc_id of every chunk stored for these documents."""
        keys = {doc_key(d): d for d in doc_ids}
        out: dict[str, str] = {}
        c = self.client()
        try:
            c.load_collection(self.collection)
            for batch in batches(sorted(keys), BATCH_DOCS):
                it = c.query_iterator(
                    self.collection,
                    batch_size=1000,
                    filter=f"doc_key in {json.dumps(batch)}",
                    output_fields=["id", "doc_key"],
                )
                while rows := it.next():
                    out.update({r["id"]: keys[r["doc_key"]] for r in rows})
                it.close()
        finally:
            c.close()
        return out

    def _delete_batch(self, client, ids: list[str]) -> None:
        client.delete(self.collection, ids=ids)

    def after_write(self) -> None:
        """Loaded: a plain `MilvusClient.query` or `search` answers without load_collection first
        (a collection that is not loaded fails them with code 101)."""
        c = self.client()
        try:
            c.load_collection(self.collection)
        finally:
            c.close()

    def query(self, vector: np.ndarray, top_k: int) -> list[Hit]:
        dtype = (self.fmt or VectorFormat(len(vector))).dtype
        sent = np.asarray(vector, np.float32)
        if dtype in (INT8, BINARY):  # a server compares like with like: the query's own codes or bits
            sent = quantize(sent[None], dtype, self.ranges)[0]
        c = self.client()
        try:
            c.load_collection(self.collection)
            res = c.search(
                self.collection,
                [PYTHON_VALUES[dtype](sent)],
                limit=top_k,
                anns_field="embedding",
                search_params={"metric_type": METRICS.get(dtype, "IP")},
                output_fields=["doc_id", "chunk_index", "page_start", "section", "text"],
            )
        finally:
            c.close()
        return [
            Hit(
                h["id"],
                e["doc_id"],
                e["chunk_index"],
                -float(h["distance"]) if dtype == BINARY else float(h["distance"]),
                e.get("page_start"),
                e.get("section"),
                e.get("text"),
            )
            for h in res[0]
            for e in [h["entity"]]
        ]


def _field(name: str):
    return lambda c: c.metadata.get(name)
