"""The output contract's tables: their names, where their files go, and their schemas.

Every path under `--output` is built here. Columns added since the first contract are
nullable and come last, so earlier readers keep working: documents/ `metadata` (the JSON of
the input record's other fields), `text` (the text offsets refer to; null with
--no-store-text), `format`, `url` and `crawl_date` (WARC), `fingerprint`, `language` (the
ISO 639-1 code whose rules applied; null: undetermined); chunks/ `text`,
`page_start`/`page_end` (PDF), `section` (headings), `cut_in_word`.
"""

import pyarrow as pa

from docbeam.pipeline.core.vector_format import FLOAT32, VectorFormat

DOCUMENTS, CHUNKS, EXTRACTIONS, ERRORS = "documents", "chunks", "extractions", "errors"
DATA_TABLES = (DOCUMENTS, CHUNKS, EXTRACTIONS, ERRORS)  # what a wave writes
COST, PROGRESS, REMOVED = "_cost", "_progress", "removed"
SINK_ERRORS = "_sink_errors"  # --sink: per store, the ids of chunks that could not be written
BUDGET_SAMPLE = "_budget_sample"  # the --budget-usd sample's outputs, reused by the run itself
INDEX = "_index"  # `docbeam index RUN`: an approximate index of the chunk vectors (pipeline/search)
INDEX_FILES = ("chunks.faiss", "index.json")
VECTORS = "_vectors"  # --vector-dtype int8: the calibration ranges (core.vector_format.RANGES_FILE)
MANIFEST, JOB_RECORD = "_manifest.json", "_job.json"  # _job.json: what the launcher submitted last
RUN_FOLDERS = (*DATA_TABLES, COST, PROGRESS, REMOVED, BUDGET_SAMPLE, INDEX, SINK_ERRORS, VECTORS)  # what a run owns
RUN_MARKER = "_docbeam_run.json"  # written when a run starts: the folder is docbeam's (io.run_folder)
RUN_FILES = (MANIFEST, JOB_RECORD, RUN_MARKER)
SUFFIX = {DOCUMENTS: ".parquet", CHUNKS: ".parquet", EXTRACTIONS: ".parquet", ERRORS: ".jsonl"}


def join(output: str, *parts: str) -> str:
    """A path under a local folder or gs:// prefix (always '/': gs:// and POSIX agree)."""
    return "/".join([output.rstrip("/"), *parts])


def folder(output: str, table: str) -> str:
    """The folder of a table, with its trailing '/' (a listing prefix)."""
    return join(output, table) + "/"


def file_prefix(output: str, table: str, name: str) -> str:
    """What a sink writes: <output>/<table>/<name>-NNNNN-of-NNNNN<suffix>."""
    return join(output, table, name)


# The Arrow value type of `embedding` per --vector-dtype (binary: the packed bytes, uint8).
EMBEDDING_VALUES = {"float32": pa.float32(), "float16": pa.float16(), "int8": pa.int8(), "binary": pa.uint8()}


def embedding_type(dim: int, dtype: str = FLOAT32) -> pa.DataType:
    """`embedding`'s type: `dim` values of `dtype` (float32: the contract's first type)."""
    return pa.list_(EMBEDDING_VALUES[dtype], dim)


def documents_schema(dim: int, dtype: str = FLOAT32) -> pa.Schema:
    """`dim`: values per vector (VectorFormat.width: bytes, for binary)."""
    return pa.schema(
        [
            ("doc_id", pa.string()),
            ("source", pa.string()),
            ("n_chars", pa.int64()),
            ("n_tokens", pa.int64()),
            ("n_chunks", pa.int32()),
            ("embedding", embedding_type(dim, dtype)),
            ("model", pa.string()),
            ("attention", pa.string()),
            ("metadata", pa.string()),
            ("text", pa.string()),
            ("format", pa.string()),
            ("url", pa.string()),
            ("crawl_date", pa.timestamp("ms", tz="UTC")),
            ("fingerprint", pa.string()),
            ("language", pa.string()),
        ]
    )


def chunks_schema(dim: int, dtype: str = FLOAT32) -> pa.Schema:
    return pa.schema(
        [
            ("doc_id", pa.string()),
            ("chunk_index", pa.int32()),
            ("start_char", pa.int64()),
            ("end_char", pa.int64()),
            ("n_tokens", pa.int32()),
            ("embedding", embedding_type(dim, dtype)),
            ("text", pa.string()),
            ("page_start", pa.int32()),
            ("page_end", pa.int32()),
            ("section", pa.string()),
            ("cut_in_word", pa.bool_()),
        ]
    )


EXTRACTIONS_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("kind", pa.string()),
        ("value", pa.string()),
        ("score", pa.float32()),
        ("start_char", pa.int64()),
        ("end_char", pa.int64()),
    ]
)


def schemas_for(fmt: VectorFormat) -> dict[str, pa.Schema]:
    """The vector tables' schemas for a run's vector format."""
    return {DOCUMENTS: documents_schema(fmt.width, fmt.dtype), CHUNKS: chunks_schema(fmt.width, fmt.dtype)}
