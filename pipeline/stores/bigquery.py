"""BigQuery: configuration only. ml.rag's BigQuery writer is a managed (Java) transform: building it
into a pipeline needs Java and Beam's expansion service on the launcher, which docbeam does not
assume, and it appends rather than upserts. Its configuration is built and checked here
(`write_config`); a run with bigquery:// is refused at launch (stores.store_for)."""

import json

from apache_beam.ml.rag.types import Chunk

from docbeam.pipeline.core.sink_uri import SinkUri

NOT_RUN = (
    "BigQuery is written by a cross-language (Java) transform: the launcher needs Java and Beam's "
    "expansion service, and BigQuery's writer appends rather than upserts; not run by docbeam yet "
    "(README: Writing to vector stores)"
)

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


def write_config(sink: SinkUri, dim: int):
    """ml.rag's BigQuery writer config for `sink`'s table (built and checked; not run)."""
    from apache_beam.ml.rag.ingestion.bigquery import BigQueryVectorWriterConfig, SchemaConfig

    return BigQueryVectorWriterConfig(
        write_config={"table": sink.collection, "create_disposition": "CREATE_IF_NEEDED"},
        schema_config=SchemaConfig(BIGQUERY_SCHEMA, embeddable_to_dict_fn=bigquery_row),
    )
