"""--sink on a real Milvus Lite engine, without the model: a run's output folder is written by
hand (documents/ and chunks/ Parquet), then launch.after_run.sink_sync writes it through ml.rag's Milvus writer
and reconciles the store with the store's own client."""

import json
import uuid
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from pymilvus import DataType, MilvusClient

from docbeam.pipeline.core import tables
from docbeam.pipeline.core.sink_uri import parse
from docbeam.pipeline.graph.table_writers import to_table
from docbeam.pipeline.io import storage
from docbeam.pipeline.launch.after_run import sink_sync
from docbeam.pipeline.stores import query_store, store_for
from docbeam.pipeline.stores.base import StoreError, chunk_id, doc_key, to_chunk
from tests.support.store_dump import dump

DIM = 8


def unit(rng, n):
    v = rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def write_output(
    out, docs: dict[str, int], seed: int = 0, text: bool = True, texts: dict | None = None, meta: dict | None = None
) -> list[dict]:
    """An output folder holding `docs` (doc_id -> number of chunks); returns the chunk rows.
    `texts` ((doc_id, chunk_index) -> text) and `meta` (doc_id -> metadata) override the defaults."""
    texts, meta = texts or {}, meta or {}
    rng = np.random.default_rng(seed)
    chunk_rows, doc_rows = [], []
    for d, n in docs.items():
        vecs = unit(rng, n)
        for i in range(n):
            chunk_rows.append(
                {
                    "doc_id": d,
                    "chunk_index": i,
                    "start_char": i * 10,
                    "end_char": i * 10 + 10,
                    "n_tokens": 5,
                    "embedding": vecs[i],
                    "text": texts.get((d, i), f"{d} chunk {i} seed {seed}") if text else None,
                    "page_start": i + 1 if d.endswith(".pdf") else None,
                    "page_end": i + 1 if d.endswith(".pdf") else None,
                    "section": "Intro" if i == 0 else None,
                    "cut_in_word": False,
                }
            )
        metadata = json.dumps(meta.get(d, {"lang": "en", "n": n}))
        doc_rows.append({"doc_id": d, "metadata": metadata, "embedding": vecs.mean(0)})
    for table, rows, schema in (
        (tables.CHUNKS, chunk_rows, tables.chunks_schema(DIM)),
        (tables.DOCUMENTS, doc_rows, tables.documents_schema(DIM)),
    ):
        folder = out / table
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        pq.write_table(to_table(rows, schema), folder / "part-00000-of-00001.parquet")
    return chunk_rows


def assert_store_equals(store, rows: list[dict]) -> None:
    held = dump(store)
    assert set(held) == {chunk_id(r["doc_id"], r["chunk_index"]) for r in rows}
    for r in rows:
        h = held[chunk_id(r["doc_id"], r["chunk_index"])]
        assert (h["doc_id"], h["chunk_index"], h["text"], h["section"]) == (
            r["doc_id"],
            r["chunk_index"],
            r["text"],
            r["section"],
        )
        assert h["page_start"] == r["page_start"]
        np.testing.assert_allclose(h["embedding"], r["embedding"], atol=1e-6)


def test_chunk_ids_are_stable_uuids_distinct_per_doc_and_index():
    ids = {chunk_id("a", 1), chunk_id("a1", 0), chunk_id("a", 10), chunk_id("a\n", 1)}
    assert len(ids) == 4
    assert chunk_id("a", 1) == chunk_id("a", np.int32(1))  # an int32 from Parquet: the same id
    assert uuid.UUID(chunk_id("a", 1)).version == 5  # Qdrant takes UUIDs (or integers) only


def test_a_row_maps_onto_an_ml_rag_chunk():
    row = {"doc_id": "d", "chunk_index": 2, "embedding": np.ones(3, np.float32), "text": "hi", "page_start": 4}
    c = to_chunk(row, json.dumps({"lang": "de"}))
    assert c.id == chunk_id("d", 2) and c.index == 2 and c.content.text == "hi"
    assert c.embedding.dense_embedding == [1.0, 1.0, 1.0]
    assert c.metadata["metadata"] == {"lang": "de"} and c.metadata["page_start"] == 4
    assert c.metadata["doc_key"] == doc_key("d")
    bare = to_chunk(row, None, store_text=False)
    assert bare.content.text is None and bare.metadata["text"] is None and bare.metadata["metadata"] is None


@pytest.fixture
def short_retries():
    previous = storage.configure_retries(storage.RetryPolicy(max_attempts=2, initial_wait_s=0.01, max_wait_s=0.02))
    yield
    storage.configure_retries(previous)


LOCAL_STORES = pytest.mark.parametrize(
    "local", ["milvus://{}/store.db", "qdrant://{}/qdrant"], ids=["milvus", "qdrant"]
)


@LOCAL_STORES
def test_write_reuse_and_delete_leave_the_store_equal_to_the_parquet(tmp_path, short_retries, local):
    uri = local.format(tmp_path)
    store = store_for(parse(uri))
    out = tmp_path / "out"
    first = write_output(out, {"a": 3, "b.pdf": 2, "c": 1, "gone": 2})
    assert sink_sync.check([uri], DIM) == [True]
    from apache_beam.options.pipeline_options import PipelineOptions

    records, totals = sink_sync.write_all([uri], str(out), DIM, PipelineOptions([]), True, [])
    assert records[0]["holds"] and records[0]["written"] == 8 and records[0]["deleted"] == 0
    assert totals["elements_in"] == 8 and totals["wall_us"] > 0
    assert_store_equals(store, first)
    # the next run: "a" now has one chunk (two surplus), "gone" removed, "c" changed, "new" added
    second = write_output(out, {"a": 1, "b.pdf": 2, "c": 1, "new": 2}, seed=1)
    assert sink_sync.check([uri], DIM) == [False]
    records, _ = sink_sync.write_all([uri], str(out), DIM, PipelineOptions([]), True, ["gone"])
    assert records[0]["holds"] and records[0]["deleted"] == 4  # a#1, a#2, gone#0, gone#1
    assert_store_equals(store, second)
    # the store answers a query as exact search over the Parquet output does
    vecs = np.stack([r["embedding"] for r in second])
    for q in unit(np.random.default_rng(7), 5):
        hits = query_store(uri, q, top_k=4)
        order = np.argsort(-(vecs @ q))[:4]
        assert [h["chunk_id"] for h in hits] == [chunk_id(second[i]["doc_id"], second[i]["chunk_index"]) for i in order]
        np.testing.assert_allclose([h["score"] for h in hits], (vecs @ q)[order], atol=1e-5)
        assert set(hits[0]) == {"chunk_id", "doc_id", "chunk_index", "score", "page", "section", "text"}


@LOCAL_STORES
def test_a_collection_of_another_dimension_is_refused_before_the_run(tmp_path, local):
    uri = local.format(tmp_path)
    sink_sync.check([uri], DIM)
    with pytest.raises(Exception, match=rf"--sink {uri}: collection docbeam_chunks holds 8-dimensional"):
        sink_sync.check([uri], 16)
    with pytest.raises(StoreError):
        store_for(parse(uri)).ensure(16)


def test_the_same_store_twice_is_refused(tmp_path):
    uri = f"milvus://{tmp_path}/store.db"
    with pytest.raises(Exception, match="the same store"):
        sink_sync.check([uri, uri], DIM)


def test_failed_writes_are_retried_then_listed_by_chunk_id_and_fail_the_sink(tmp_path, short_retries):
    """A collection someone made with room for 4 characters of text: every upsert fails."""
    path = tmp_path / "store.db"
    c = MilvusClient(str(path))
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=36)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=DIM)
    schema.add_field("doc_key", DataType.VARCHAR, max_length=32)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=100)
    schema.add_field("chunk_index", DataType.INT64)
    for f in ("page_start", "page_end"):
        schema.add_field(f, DataType.INT32, nullable=True)
    schema.add_field("section", DataType.VARCHAR, max_length=100, nullable=True)
    schema.add_field("metadata", DataType.JSON, nullable=True)
    schema.add_field("text", DataType.VARCHAR, max_length=4, nullable=True)
    index = c.prepare_index_params()
    index.add_index("embedding", index_type="FLAT", metric_type="IP")
    c.create_collection("docbeam_chunks", schema=schema, index_params=index)
    c.close()
    out = tmp_path / "out"
    rows = write_output(out, {"a": 2, "b": 1})
    uri = f"milvus://{path}"
    from apache_beam.options.pipeline_options import PipelineOptions

    sink_sync.check([uri], DIM)  # the shape fits: the failure shows only when writing
    (record,), totals = sink_sync.write_all([uri], str(out), DIM, PipelineOptions([]), True, [])
    assert not record["holds"] and record["failed"] == 3 and record["written"] == 0
    assert record["retries"] >= 1 and totals["retries"] == record["retries"]
    lines = [json.loads(x) for x in open(record["error_file"]).read().splitlines()]
    assert {x["chunk_id"] for x in lines} == {chunk_id(r["doc_id"], r["chunk_index"]) for r in rows}
    assert all(x["sink"] == uri and x["error"] for x in lines)
    from docbeam.pipeline.launch.running.run_folder import owned

    assert owned(str(Path(record["error_file"]).relative_to(out)))  # --overwrite / --resume may delete it


@pytest.mark.parametrize(
    "uri, shown",
    [
        ("milvus:///data/chunks.db", "milvus:///data/chunks.db"),
        ("milvus://bob:hunter2@host:19530/coll?db=x&token=s3cr3t", "milvus://bob:***@host:19530/coll?db=x&token=***"),
        ("qdrant://host:6333/coll?api_key=s3cr3t&https=1", "qdrant://host:6333/coll?api_key=***&https=1"),
        ("bigquery://my-project.dataset.chunks", "bigquery://my-project.dataset.chunks"),
    ],
)
def test_secrets_of_a_sink_uri_are_redacted_everywhere_it_is_shown(uri, shown):
    from docbeam.pipeline.core.sink_uri import redact_args
    from docbeam.pipeline.launch.running.job import _shown_options

    assert parse(uri).redacted == shown == str(parse(uri))
    assert redact_args(["--sink", uri, f"--sink={uri}", "--output", "o"]) == [
        "--sink",
        shown,
        f"--sink={shown}",
        "--output",
        "o",
    ]
    assert _shown_options({"sink": [uri], "output": "o"}) == {"sink": [shown], "output": "o"}
    assert "hunter2" not in repr(parse(uri)) and "s3cr3t" not in repr(parse(uri))


def test_a_sink_that_failed_fails_the_run_with_the_accounting_status():
    from docbeam.pipeline.launch.after_run import manifest
    from docbeam.pipeline.launch.display.console import exit_status
    from docbeam.pipeline.launch.running.job import RunResult

    check = {"holds": True, "read": 3, "ok": 3, "rejected": 0}
    failed = {"uri": "milvus:///s.db", "chunks": 5, "failed": 2, "holds": False, "error": "E", "error_file": "f.jsonl"}
    verdict = manifest.verdict(check, "5%", sinks=[failed])
    assert verdict["problems"] == ["sink milvus:///s.db: 2 of 5 chunks not written (E); their ids are in f.jsonl"]
    res = RunResult(
        {"verdict": verdict, "counts": {"rejected": 0}, "accounting": check, "sinks": [failed]}, {}, 1.0, {}
    )
    assert exit_status(res)[0] == 1


def test_the_bigquery_writer_is_built_offline_and_its_rows_fit_its_schema():
    """No network, no Java: ml.rag's config and transform are built, and a chunk's row is checked
    against the schema by Beam's own BigQuery conversions (what the managed write is fed)."""
    from apache_beam.io.gcp.bigquery_tools import beam_row_from_dict, get_beam_typehints_from_tableschema
    from apache_beam.ml.rag.ingestion.base import VectorDatabaseWriteTransform

    from docbeam.pipeline.stores import bigquery
    from docbeam.pipeline.stores.bigquery import BIGQUERY_SCHEMA

    sink = parse("bigquery://my-project.rag.chunks")
    config = bigquery.write_config(sink, DIM)
    assert config.write_config["table"] == "my-project.rag.chunks"
    assert VectorDatabaseWriteTransform(config).database_config is config
    assert type(config.create_write_transform()).__name__ == "_WriteToBigQueryVectorDatabase"
    row = {"doc_id": "a.pdf", "chunk_index": 1, "embedding": np.ones(DIM, np.float32), "text": "t", "page_start": 2}
    as_dict = config.schema_config.embeddable_to_dict_fn(to_chunk(row, json.dumps({"lang": "en"})))
    assert set(as_dict) == {f["name"] for f in BIGQUERY_SCHEMA["fields"]}
    beam_row = beam_row_from_dict(as_dict, BIGQUERY_SCHEMA)
    hints = dict(get_beam_typehints_from_tableschema(BIGQUERY_SCHEMA))
    assert set(hints) == set(as_dict)
    assert beam_row.id == chunk_id("a.pdf", 1) and beam_row.page_start == 2 and beam_row.metadata == '{"lang": "en"}'
    assert list(beam_row.embedding) == [1.0] * DIM
    with pytest.raises(Exception, match="needs Java and Beam's expansion service"):
        sink_sync.check(["bigquery://my-project.rag.chunks"], DIM)


def test_the_runs_beam_jobs_get_no_sink_uri_in_their_options():
    """The workers' options (shown by Dataflow) never carry a sink's secrets: the launcher writes."""
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.pipeline.launch.running.job import Launch

    uri = "milvus://bob:hunter2@host:19530/c"
    argv = ["--input", "x", "--sink", uri, f"--sink={uri}", "--output", "o", "--direct_num_workers=2"]
    launch = Launch(None, PipelineOptions(argv), argv, True, None, {})  # type: ignore[arg-type]
    assert launch.flags.sink == [uri, uri]
    shown = launch.job_options.get_all_options(drop_default=True)
    assert "sink" not in shown and shown["direct_num_workers"] == 2 and shown["output"] == "o"
    assert "hunter2" not in json.dumps(shown, default=str)


def test_a_retried_client_error_is_logged_without_the_uri_or_its_secrets(short_retries, caplog):
    uri = "milvus://root:hunter2@db.example:19530/coll?token=s3cr%2Ft"
    attempts = []

    def fail():
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionError(f"cannot connect to {uri}: bad password hunter2, token s3cr/t")
        return "ok"

    with caplog.at_level("WARNING", logger="docbeam"):
        assert sink_sync._retrying(fail, [], uri) == "ok"
    logged = caplog.text
    assert "attempt 1 failed" in logged and "milvus://root:***@db.example:19530/coll" in logged
    for secret in ("hunter2", "s3cr%2Ft", "s3cr/t"):
        assert secret not in logged


def test_redact_text_replaces_the_secret_values_too():
    from docbeam.pipeline.core.sink_uri import redact_text

    uri = "milvus://root:hun%40ter2@host:19530/c?api-key=k%2By&db=x"
    text = redact_text(f"bad password hun@ter2 for {uri}; key k+y (raw k%2By)", [uri])
    assert "hun@ter2" not in text and "hun%40ter2" not in text and "k+y" not in text and "k%2By" not in text
    assert "milvus://root:***@host:19530/c?api-key=***&db=x" in text


@pytest.mark.parametrize("password", ["xq/zz", "xq?zz", "xq#zz", "xq@zz"])
def test_an_unencoded_special_character_in_a_password_never_shows_it(password):
    from docbeam.pipeline.core.sink_uri import redact, redact_args

    uri = f"milvus://root:{password}@db.example:19530/coll"
    with pytest.raises(ValueError, match="must be percent-encoded") as err:
        parse(uri)
    for shown in (str(err.value), redact(uri), *redact_args(["--sink", uri, f"--sink={uri}"])):
        assert "xq" not in shown and "zz" not in shown, shown
    assert redact(uri) == "milvus://***@db.example:19530/coll"


@pytest.mark.parametrize("name", ["api-key", "access_token", "X-Auth", "clientSecret", "passwd"])
def test_any_key_token_secret_pass_or_auth_parameter_is_a_secret(name):
    sink = parse(f"qdrant://host:6333/coll?{name}=SECRETVALUE&https=1")
    assert "SECRETVALUE" not in sink.redacted and sink.params == {"https": "1"}
    assert sink.secrets == {name.lower(): "SECRETVALUE"}


def test_text_and_metadata_over_milvus_limits_are_cut_not_failing_the_sink(tmp_path, short_retries):
    """One [UNK] token can span a base64 blob: a 70,000-character chunk; a Milvus server counts
    VARCHAR max_length in bytes, so 40,000 two-byte characters (80,000 bytes) must be cut too;
    metadata over 64 KiB of JSON is stored as null."""
    from apache_beam.options.pipeline_options import PipelineOptions

    long_text, wide_text = "QUJD" * 17_500, "é" * 40_000
    out = tmp_path / "out"
    rows = write_output(
        out,
        {"blob": 2, "fr": 1, "big": 1},
        texts={("blob", 1): long_text, ("fr", 0): wide_text},
        meta={"big": {"x": "y" * 70_000}},
    )
    uri = f"milvus://{tmp_path}/store.db"
    sink_sync.check([uri], DIM)
    (record,), _ = sink_sync.write_all([uri], str(out), DIM, PipelineOptions([]), True, [])
    assert record["holds"] and record["written"] == 4 and record["truncated"] == 3
    from docbeam.pipeline.launch.display.console import sink_lines

    assert "3 cut to the store's field limits" in sink_lines([record])[0]
    held = dump(store_for(parse(uri)))
    blob, fr = held[chunk_id("blob", 1)]["text"], held[chunk_id("fr", 0)]["text"]
    assert len(blob) == 65_535 and long_text.startswith(blob)
    assert len(fr.encode()) <= 65_535 and len(fr) == 32_767 and wide_text.startswith(fr)
    assert held[chunk_id("big", 0)]["metadata"] is None
    assert held[chunk_id("blob", 0)]["metadata"] == {"lang": "en", "n": 2}
    assert held[chunk_id("blob", 0)]["text"] == rows[0]["text"]


@pytest.mark.parametrize("scheme", ["milvus", "qdrant"])
def test_searching_an_unreachable_server_store_is_one_line_without_secrets(scheme):
    from docbeam.pipeline.cli import _store_hits
    from docbeam.pipeline.core.flags import UsageError

    user = "root:hunter2@" if scheme == "milvus" else ""  # Qdrant refuses a user:password (it never sends one)
    uri = f"{scheme}://{user}127.0.0.1:1/coll?timeout=1&api_key=s3cr3t"  # port 1: nothing listens
    with pytest.raises(UsageError) as err:
        _store_hits(uri, np.zeros(DIM, np.float32), 3)
    said = str(err.value)
    shown = "root:***@" if user else ""
    assert said.startswith(f"--sink: cannot reach {scheme}://{shown}127.0.0.1:1/coll") and "\n" not in said
    assert "hunter2" not in said and "s3cr3t" not in said
