"""Every chunk a test's store holds (id -> record), read through the store's own client: what the
tests compare against chunks/ Parquet. Small stores only."""

from docbeam.pipeline.stores.base import VectorStore
from docbeam.pipeline.stores.milvus import MilvusStore
from docbeam.pipeline.stores.qdrant import DENSE, QdrantStore


def dump(store: VectorStore) -> dict[str, dict]:
    c = store.client()
    try:
        if isinstance(store, MilvusStore):
            out = {}
            c.load_collection(store.collection)
            it = c.query_iterator(store.collection, batch_size=1000, filter='id != ""', output_fields=["*"])
            while rows := it.next():
                out.update({r["id"]: r for r in rows})
            it.close()
            return out
        assert isinstance(store, QdrantStore), type(store)
        return {
            str(p.id): {**p.payload, "id": str(p.id), "embedding": p.vector[DENSE]}
            for p in store._scroll(c, None, True, vectors=True)
        }
    finally:
        c.close()
