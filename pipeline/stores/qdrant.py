"""Qdrant: local mode for a folder (`qdrant:///path/to/folder`), or a server."""

from collections.abc import Iterable, Iterator

import numpy as np

from docbeam.pipeline.core.vector_format import FLOAT16, FLOAT32, INT8, VectorFormat
from docbeam.pipeline.stores.base import BATCH_DOCS, Hit, StoreError, VectorStore, batches, doc_key

DENSE = "dense"  # the vector's name in the collection (ml.rag's QdrantWriteConfig default; README's example)
# Qdrant's vector datatypes per --vector-dtype: int8 codes are kept as uint8 (code + 128, which is
# sentence-transformers' "uint8" for the same ranges). Qdrant has no bit vectors: binary is refused.
DATATYPES = {FLOAT32: "float32", FLOAT16: "float16", INT8: "uint8"}


def _as_uint8(chunk) -> bool:
    """An int8 chunk's codes as the uint8 values Qdrant keeps (applied before the write)."""
    emb = chunk.embedding
    emb.dense_embedding = [float(x) + 128 for x in emb.dense_embedding or []]
    return False  # nothing cut


class QdrantStore(VectorStore):
    # fit: None (a payload has no per-field limits), except int8's shift to uint8
    dtypes = tuple(DATATYPES)
    code_offset = 128  # uint8 = int8 code + 128

    def __init__(self, sink, fmt: VectorFormat | None = None, ranges=None):
        super().__init__(sink, fmt, ranges)
        if fmt is not None and fmt.dtype == INT8:
            self.fit = _as_uint8

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

    def write_config(self, dim: "int | VectorFormat"):
        """ml.rag's Qdrant writer config: the payload is the Chunk's metadata (text included)."""
        from apache_beam.ml.rag.ingestion.qdrant import QdrantConnectionParameters, QdrantWriteConfig

        return QdrantWriteConfig(
            connection_params=QdrantConnectionParameters(**self._connection()),
            collection_name=self.collection,
            batch_size=500,
            dense_embedding_key=DENSE,
        )

    def ensure(self, dim: "int | VectorFormat") -> bool:
        from qdrant_client import models

        fmt = self.vector_format(dim)
        dim, datatype = fmt.dim, models.Datatype(DATATYPES[fmt.dtype])
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
                if (have.datatype or models.Datatype.FLOAT32) != datatype:
                    kept = (have.datatype or models.Datatype.FLOAT32).value
                    raise StoreError(
                        f"collection {self.collection} holds {kept} vectors; this run's are {datatype.value}"
                    )
                return False
            # Dot product of L2-normalised vectors: cosine, the scores exact search over Parquet gives
            # (int8: the query is scaled per dimension, stores.base.query_vector).
            params = models.VectorParams(size=dim, distance=models.Distance.DOT, datatype=datatype)
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
            for batch in batches(sorted(keys), BATCH_DOCS):
                flt = models.Filter(must=[models.FieldCondition(key="doc_key", match=models.MatchAny(any=batch))])
                out.update({str(p.id): keys[p.payload["doc_key"]] for p in self._scroll(c, flt, ["doc_key"])})
        finally:
            c.close()
        return out

    def _delete_batch(self, client, ids: list[str]) -> None:
        from qdrant_client import models

        points: list[models.ExtendedPointId] = list(ids)
        client.delete(self.collection, points_selector=models.PointIdsList(points=points), wait=True)

    def query(self, vector: np.ndarray, top_k: int) -> list[Hit]:
        sent, offset = self.query_vector(vector)
        c = self.client()
        try:
            if self.fmt is None:  # a caller that gave no format: int8 codes against an unscaled query rank wrongly
                vectors = c.get_collection(self.collection).config.params.vectors
                have = vectors.get(DENSE) if isinstance(vectors, dict) else None
                if have is not None and have.datatype is not None and have.datatype.value == DATATYPES[INT8]:
                    raise StoreError(
                        f"collection {self.collection} holds int8 codes: a query needs the run's vector "
                        "format and chunk ranges (query_store(uri, vector, top_k, run.vector_format, run.ranges) with "
                        "run = open_run(RUN), or docbeam search RUN --sink URI)"
                    )
            res = c.query_points(
                self.collection,
                query=sent.tolist(),
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
                float(p.score) + offset,
                e.get("page_start"),
                e.get("section"),
                e.get("text"),
            )
            for p in res.points
            for e in [p.payload]
        ]
