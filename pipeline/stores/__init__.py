"""The vector stores behind `--sink` and `docbeam search --sink`: one module per store, each a
`base.VectorStore` (milvus, qdrant); bigquery builds its writer's configuration only.

`store_for(sink)` is the one place a URI's scheme picks a store."""

import numpy as np

from docbeam.pipeline.core.sink_uri import SinkUri, parse
from docbeam.pipeline.core.vector_format import VectorFormat
from docbeam.pipeline.stores import bigquery
from docbeam.pipeline.stores.base import StoreError, VectorStore


def store_for(sink: SinkUri, fmt: VectorFormat | None = None, ranges: np.ndarray | None = None) -> VectorStore:
    """The store `sink` names, for vectors of `fmt` (None: full float32) and, int8, the run's
    chunk ranges (queries need them)."""
    # Store modules load on use: each imports its client library, an optional extra.
    if sink.scheme == "milvus":
        from docbeam.pipeline.stores.milvus import MilvusStore

        return MilvusStore(sink, fmt, ranges)
    if sink.scheme == "qdrant":
        from docbeam.pipeline.stores.qdrant import QdrantStore

        return QdrantStore(sink, fmt, ranges)
    if sink.scheme == "bigquery":
        raise StoreError(bigquery.NOT_RUN)
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


def query_store(uri: str, vector, top_k: int = 10, fmt: VectorFormat | None = None, ranges=None) -> list[dict]:
    """`docbeam search --sink URI`: the store's top_k chunks by inner product (= cosine: the
    vectors are normalised) with `vector` (float32, the run's --dims), best first, as dicts
    (chunk_id, doc_id, chunk_index, score, page, section, text). `fmt`, `ranges`: the run's
    vector format and int8 chunk ranges (the query is scaled or quantised to match)."""
    store = store_for(parse(uri), fmt, ranges)
    return [h.to_dict() for h in store.query(np.asarray(vector, np.float32), top_k)]
