"""The one adapter between docbeam's chunk rows and the vector stores of `--sink`.

Rows become Beam ml.rag `Chunk`s (`to_chunk`), which ml.rag's own write transforms upsert
(`Store.write_config` gives each store's ml.rag WriteConfig). ml.rag writers only upsert, so
what they cannot do goes through each store's own client, one small function per store:
create the collection, list the ids stored for some documents, delete ids, search.

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
import logging
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from apache_beam.ml.rag.types import Chunk, Content, Embedding

from docbeam.pipeline.core.sink_uri import SinkUri

_ID_SPACE = uuid.UUID("6f1c3b1e-9d0a-4c1e-8a55-d0cbea4d0c5a")  # docbeam's uuid5 namespace for chunk ids
FIELDS = ("doc_id", "chunk_index", "page_start", "page_end", "section", "metadata", "text")
BATCH_DOCS = 256  # documents per id look-up (a filter of this many keys)
# Milvus's limits (milvus.io docs, "String Field" and "JSON Field"): a VARCHAR holds at most
# max_length BYTES of UTF-8 (Milvus Lite 3.2 counts characters, a server counts bytes: capping
# bytes fits both), a JSON value at most 65,536 bytes. One [UNK] token can span a whole base64
# blob, so a chunk's text can exceed them, and one such row fails the whole batch on every retry.
MILVUS_VARCHAR_BYTES = 65535  # docbeam's schema: doc_id, section, text
MILVUS_JSON_BYTES = 65536


class StoreError(Exception):
    """A store that cannot take this run's chunks (its collection has another shape)."""


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


def _batches(items: list, size: int) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


# --------------------------------------------------------------------------------------
# Milvus (Milvus Lite for a local .db file, or a server)
# --------------------------------------------------------------------------------------


def _not_milvus_lite_noise(record: logging.LogRecord) -> bool:
    # Milvus Lite (3.2) serves gRPC in this process and lacks AllocTimestamp, which pymilvus 3
    # calls to start a query iterator; it then falls back to a client-side timestamp, which
    # suits a single-process store. The traceback and the warning say nothing to act on.
    message = record.getMessage()
    return "Method not implemented" not in message and "failed to get mvccTs" not in message


class MilvusStore:
    fit = staticmethod(fit_milvus)  # applied to each Chunk before the write (graph.store_write)

    def __init__(self, sink: SinkUri):
        self.sink = sink
        self.collection = sink.collection
        for name in ("grpc._server", "pymilvus.client.iterator.query_iterator"):
            logger = logging.getLogger(name)
            if _not_milvus_lite_noise not in logger.filters:
                logger.addFilter(_not_milvus_lite_noise)

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

        return MilvusClient(**self._connection())

    def write_config(self, dim: int):
        """ml.rag's Milvus writer config: one column per field of the record."""
        from apache_beam.ml.rag.ingestion.jdbc_common import WriteConfig
        from apache_beam.ml.rag.ingestion.milvus_search import MilvusVectorWriterConfig, MilvusWriteConfig
        from apache_beam.ml.rag.ingestion.postgres_common import ColumnSpec
        from apache_beam.ml.rag.utils import MilvusConnectionParameters

        conn = self._connection()
        specs = [
            ColumnSpec("id", str, lambda c: c.id),
            ColumnSpec("embedding", list, lambda c: list(c.dense_embedding or [])),
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

    def ensure(self, dim: int) -> bool:
        """Create the collection if absent (True when it was created); refuse one whose vectors
        have another dimension or that lacks docbeam's fields."""
        from pymilvus import DataType, MilvusClient

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
                missing = [f for f in ("id", "embedding", "doc_key", *FIELDS) if f not in fields]
                if missing:
                    raise StoreError(f"collection {self.collection} lacks the fields {', '.join(missing)}")
                c.load_collection(self.collection)
                return False
            schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=36)
            schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=dim)
            schema.add_field("doc_key", DataType.VARCHAR, max_length=32)
            schema.add_field("doc_id", DataType.VARCHAR, max_length=MILVUS_VARCHAR_BYTES)
            schema.add_field("chunk_index", DataType.INT64)
            schema.add_field("page_start", DataType.INT32, nullable=True)
            schema.add_field("page_end", DataType.INT32, nullable=True)
            schema.add_field("section", DataType.VARCHAR, max_length=MILVUS_VARCHAR_BYTES, nullable=True)
            schema.add_field("metadata", DataType.JSON, nullable=True)
            schema.add_field("text", DataType.VARCHAR, max_length=MILVUS_VARCHAR_BYTES, nullable=True)
            index = c.prepare_index_params()
            # FLAT: exact inner product, so the store's top-k is the Parquet output's top-k.
            index.add_index("embedding", index_type="FLAT", metric_type="IP")
            if not self.sink.local:  # Milvus Lite indexes vectors only
                index.add_index("doc_key", index_type="INVERTED")
            c.create_collection(self.collection, schema=schema, index_params=index, consistency_level="Strong")
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
            for batch in _batches(sorted(keys), BATCH_DOCS):
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

    def delete(self, ids: list[str]) -> int:
        c = self.client()
        try:
            for batch in _batches(ids, 1000):
                c.delete(self.collection, ids=batch)
        finally:
            c.close()
        return len(ids)

    def dump(self) -> dict[str, dict]:
        """Every stored chunk: id -> record (tests; small stores)."""
        c = self.client()
        out = {}
        try:
            c.load_collection(self.collection)
            it = c.query_iterator(self.collection, batch_size=1000, filter='id != ""', output_fields=["*"])
            while rows := it.next():
                out.update({r["id"]: r for r in rows})
            it.close()
        finally:
            c.close()
        return out

    def query(self, vector: np.ndarray, top_k: int) -> list[Hit]:
        c = self.client()
        try:
            c.load_collection(self.collection)
            res = c.search(
                self.collection,
                [np.asarray(vector, np.float32).tolist()],
                limit=top_k,
                anns_field="embedding",
                search_params={"metric_type": "IP"},
                output_fields=["doc_id", "chunk_index", "page_start", "section", "text"],
            )
        finally:
            c.close()
        return [
            Hit(
                h["id"],
                e["doc_id"],
                e["chunk_index"],
                float(h["distance"]),
                e.get("page_start"),
                e.get("section"),
                e.get("text"),
            )
            for h in res[0]
            for e in [h["entity"]]
        ]


# --------------------------------------------------------------------------------------
# Qdrant (local mode for a folder, or a server)
# --------------------------------------------------------------------------------------

DENSE = "dense"  # the vector's name in the collection (ml.rag's QdrantWriteConfig default)


class QdrantStore:
    fit = None  # a payload has no per-field limits

    def __init__(self, sink: SinkUri):
        self.sink = sink
        self.collection = sink.collection

    def _connection(self) -> dict:
        s = self.sink
        if s.local:
            return {"path": s.path}
        return {
            "host": s.host,
            "port": s.port or 6333,
            "https": s.params.get("https") in ("1", "true"),
            "api_key": s.secrets.get("api_key") or s.secrets.get("apikey") or s.secrets.get("api-key"),
            "timeout": int(float(s.params.get("timeout", 10))),
        }

    def client(self):
        from qdrant_client import QdrantClient

        return QdrantClient(**self._connection(), **({} if self.sink.local else {"check_compatibility": False}))

    def write_config(self, dim: int):
        """ml.rag's Qdrant writer config: the payload is the Chunk's metadata (text included)."""
        from apache_beam.ml.rag.ingestion.qdrant import QdrantConnectionParameters, QdrantWriteConfig

        return QdrantWriteConfig(
            connection_params=QdrantConnectionParameters(**self._connection()),
            collection_name=self.collection,
            batch_size=500,
            dense_embedding_key=DENSE,
        )

    def ensure(self, dim: int) -> bool:
        from qdrant_client import models

        c = self.client()
        try:
            if c.collection_exists(self.collection):
                vectors = c.get_collection(self.collection).config.params.vectors
                have = vectors.get(DENSE) if isinstance(vectors, dict) else None
                if have is None:
                    raise StoreError(f"collection {self.collection} has no vector named {DENSE!r}")
                if have.size != dim:
                    raise StoreError(
                        f"collection {self.collection} holds {have.size}-dimensional vectors; this run's are {dim}"
                    )
                return False
            # Dot product of L2-normalised vectors: cosine, the scores exact search over Parquet gives.
            params = models.VectorParams(size=dim, distance=models.Distance.DOT)
            c.create_collection(self.collection, vectors_config={DENSE: params})
            if not self.sink.local:  # local mode keeps no payload indexes
                c.create_payload_index(self.collection, "doc_key", models.PayloadSchemaType.KEYWORD)
            return True
        finally:
            c.close()

    def _scroll(self, c, flt, payload, vectors=False) -> Iterator:
        offset = None
        while True:
            points, offset = c.scroll(
                self.collection,
                scroll_filter=flt,
                limit=1000,
                offset=offset,
                with_payload=payload,
                with_vectors=vectors,
            )
            yield from points
            if offset is None:
                return

    def ids_of(self, doc_ids: Iterable[str]) -> dict[str, str]:
        from qdrant_client import models

        keys = {doc_key(d): d for d in doc_ids}
        out: dict[str, str] = {}
        c = self.client()
        try:
            for batch in _batches(sorted(keys), BATCH_DOCS):
                flt = models.Filter(must=[models.FieldCondition(key="doc_key", match=models.MatchAny(any=batch))])
                out.update({str(p.id): keys[p.payload["doc_key"]] for p in self._scroll(c, flt, ["doc_key"])})
        finally:
            c.close()
        return out

    def delete(self, ids: list[str]) -> int:
        from qdrant_client import models

        c = self.client()
        try:
            for batch in _batches(ids, 1000):
                c.delete(self.collection, points_selector=models.PointIdsList(points=batch), wait=True)
        finally:
            c.close()
        return len(ids)

    def dump(self) -> dict[str, dict]:
        c = self.client()
        try:
            return {
                str(p.id): {**p.payload, "id": str(p.id), "embedding": p.vector[DENSE]}
                for p in self._scroll(c, None, True, vectors=True)
            }
        finally:
            c.close()

    def query(self, vector: np.ndarray, top_k: int) -> list[Hit]:
        c = self.client()
        try:
            res = c.query_points(
                self.collection,
                query=np.asarray(vector, np.float32).tolist(),
                using=DENSE,
                limit=top_k,
                with_payload=True,
            )
        finally:
            c.close()
        return [
            Hit(
                str(p.id),
                e["doc_id"],
                e["chunk_index"],
                float(p.score),
                e.get("page_start"),
                e.get("section"),
                e.get("text"),
            )
            for p in res.points
            for e in [p.payload]
        ]


# --------------------------------------------------------------------------------------
# BigQuery: configuration only (a cross-language writer; see README "Writing to vector stores")
# --------------------------------------------------------------------------------------

BIGQUERY_SCHEMA = {
    "fields": [
        {"name": "id", "type": "STRING", "mode": "REQUIRED"},
        {"name": "embedding", "type": "FLOAT64", "mode": "REPEATED"},
        {"name": "doc_key", "type": "STRING", "mode": "REQUIRED"},
        {"name": "doc_id", "type": "STRING", "mode": "REQUIRED"},
        {"name": "chunk_index", "type": "INT64", "mode": "REQUIRED"},
        {"name": "page_start", "type": "INT64", "mode": "NULLABLE"},
        {"name": "page_end", "type": "INT64", "mode": "NULLABLE"},
        {"name": "section", "type": "STRING", "mode": "NULLABLE"},
        {"name": "metadata", "type": "STRING", "mode": "NULLABLE"},  # the document's metadata, JSON text
        {"name": "text", "type": "STRING", "mode": "NULLABLE"},
    ]
}


def bigquery_row(chunk: Chunk) -> dict:
    """An ml.rag Chunk as a row of BIGQUERY_SCHEMA."""
    m = chunk.metadata
    return {
        "id": chunk.id,
        "embedding": list(chunk.dense_embedding or []),
        **{f: m.get(f) for f in ("doc_key", "doc_id", "chunk_index", "page_start", "page_end", "section", "text")},
        "metadata": json.dumps(m["metadata"], sort_keys=True) if m.get("metadata") is not None else None,
    }


class BigQueryStore:
    """ml.rag's BigQuery writer is a managed (Java) transform: building it into a pipeline needs
    Java and Beam's expansion service on the launcher, which docbeam does not assume. Its
    configuration is built and checked here; a run with bigquery:// is refused at launch."""

    fit = None

    def __init__(self, sink: SinkUri):
        self.sink = sink

    def write_config(self, dim: int):
        from apache_beam.ml.rag.ingestion.bigquery import BigQueryVectorWriterConfig, SchemaConfig

        return BigQueryVectorWriterConfig(
            write_config={"table": self.sink.collection, "create_disposition": "CREATE_IF_NEEDED"},
            schema_config=SchemaConfig(BIGQUERY_SCHEMA, embeddable_to_dict_fn=bigquery_row),
        )

    def ensure(self, dim: int) -> bool:
        raise StoreError(
            "BigQuery is written by a cross-language (Java) transform: the launcher needs Java and Beam's "
            "expansion service, and BigQuery's writer appends rather than upserts; not run by docbeam yet "
            "(README: Writing to vector stores)"
        )


def _field(name: str):
    return lambda c: c.metadata.get(name)


def store_for(sink: SinkUri):
    if sink.scheme == "milvus":
        return MilvusStore(sink)
    if sink.scheme == "qdrant":
        return QdrantStore(sink)
    if sink.scheme == "bigquery":
        return BigQueryStore(sink)
    raise StoreError(f"{sink.redacted}: {sink.scheme} sinks are not written yet")


def client_errors() -> tuple[type[BaseException], ...]:
    """What the store clients raise for a store that is unreachable or refuses a request."""
    errors: list[type[BaseException]] = [OSError]  # ConnectionError, socket timeouts, a file it cannot open
    try:
        from pymilvus.exceptions import MilvusException

        errors.append(MilvusException)
    except ImportError:
        pass
    try:
        from qdrant_client.http.exceptions import ApiException

        errors.append(ApiException)
    except ImportError:
        pass
    try:
        import grpc

        errors.append(grpc.RpcError)
    except ImportError:
        pass
    return tuple(errors)


def unreachable(exc: BaseException) -> bool:
    """A client's error that means the store did not answer (not that it refused the request)."""
    if isinstance(exc, OSError):
        return True
    name = type(exc).__name__
    text = str(exc)
    return name in ("ConnectError", "MilvusUnavailableException", "ResponseHandlingException") or (
        "Fail connecting to server" in text or "server unavailable" in text or "StatusCode.UNAVAILABLE" in text
    )


def query_store(uri: str, vector, top_k: int = 10) -> list[dict]:
    """`docbeam search --sink URI`: the store's top_k chunks by inner product (= cosine: the
    vectors are normalised) with `vector`, best first, as dicts (chunk_id, doc_id, chunk_index,
    score, page, section, text)."""
    from docbeam.pipeline.core.sink_uri import parse

    return [h.to_dict() for h in store_for(parse(uri)).query(np.asarray(vector, np.float32), top_k)]
