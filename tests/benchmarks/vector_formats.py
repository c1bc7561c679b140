"""What --dims and --vector-dtype cost and keep: bytes per chunk (Parquet, and each store's
vector field), recall@10 against float32 exact search, answer recall@10 on the labelled
questions, and search latency per query, for dims 384/256/128 x float32/float16/int8/binary.

    python -m tests.benchmarks.vector_formats                 # the bundled corpus (samples/docs)
    python -m tests.benchmarks.vector_formats --input DIR     # other documents (no labelled questions)
    python -m tests.benchmarks.vector_formats --rounds 3 --stores

One float32 run is encoded; every other format is a `--reuse` run of it (the same vectors,
converted by the pipeline: what a user gets). Queries: the labelled questions of
tests/search/data/questions.jsonl (fixed before anything was measured), embedded once and
truncated per --dims; with --input, the first sentence of up to 200 of its chunks. Recall@10 is
the share of float32 exact search's top 10 (over full 384-dim vectors) that a format's top 10
holds; "answer" is the quality set's recall@10 (a chunk holding the answer passage in the top
10). Latency: one query at a time through docbeam's search (int8/binary: scoring in that type
and rescoring), median of --rounds with (min-max), warm (the queries embedded beforehand).
--stores also writes each format to Qdrant's local mode and, float32 only, Milvus Lite, and
reads back what the collection declares its vectors to be (bytes = dimensions x the type's size).
"""

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from docbeam.pipeline.core.vector_format import VECTOR_DTYPES
from docbeam.pipeline.search.hits import exact_rows
from docbeam.pipeline.search.query import embed_queries
from docbeam.pipeline.search.run_chunks import open_run, read_rows
from tests.helpers import SAMPLES, run_job
from tests.search.quality import questions

DIMS = (384, 256, 128)
K = 10


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def embedding_bytes(run: str) -> tuple[float, float]:
    """(embedding column bytes per chunk, whole chunks/ file bytes per chunk), compressed, on disk."""
    col = total = rows = 0
    for f in sorted(Path(run, "chunks").glob("*.parquet")):
        meta = pq.ParquetFile(f).metadata
        rows += meta.num_rows
        total += f.stat().st_size
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            for c in range(rg.num_columns):
                if rg.column(c).path_in_schema.startswith("embedding"):
                    col += rg.column(c).total_compressed_size
    return col / rows, total / rows


def ranked(run: str, vectors: np.ndarray) -> np.ndarray:
    chunks = open_run(run)
    _, rows = exact_rows(chunks, chunks.vector_format.truncated(vectors), K)
    return rows


def latency_ms(run: str, vectors: np.ndarray) -> float:
    chunks = open_run(run)
    q = chunks.vector_format.truncated(vectors)
    t = time.perf_counter()
    for v in q:
        exact_rows(chunks, v[None], K)
    return (time.perf_counter() - t) * 1000 / len(q)


def answer_recall(run: str, rows: np.ndarray, qs: list[dict]) -> float:
    text = read_rows(open_run(run), sorted({int(r) for r in rows.ravel() if r >= 0}), ("text",))
    return float(
        np.mean([any(q["answer"] in (text[int(r)]["text"] or "") for r in ranked_) for q, ranked_ in zip(qs, rows)])
    )


def store_bytes(run_flags: list[str], inputs, base: str, tmp: Path, dtype: str, dims: int) -> dict[str, str]:
    """Per store, the bytes per vector its collection declares, read back after a real --sink write."""
    from pymilvus import MilvusClient
    from qdrant_client import QdrantClient

    sizes = {"float32": 4, "float16": 2, "uint8": 1}
    out: dict[str, str] = {}
    qdir = tmp / f"qdrant-{dtype}-{dims}"
    if dtype != "binary":
        run_job(inputs, tmp / f"qrun-{dtype}-{dims}", *run_flags, "--reuse", base, "--sink", f"qdrant://{qdir}")
        c = QdrantClient(path=str(qdir))
        v = c.get_collection("docbeam_chunks").config.params.vectors["dense"]
        c.close()
        out["qdrant"] = f"{v.size * sizes[(v.datatype.value if v.datatype else 'float32')]}"
    else:
        out["qdrant"] = "refused"
    if dtype == "float32":
        db = tmp / f"milvus-{dims}.db"
        run_job(inputs, tmp / f"mrun-{dims}", *run_flags, "--reuse", base, "--sink", f"milvus://{db}")
        m = MilvusClient(str(db))
        field = next(f for f in m.describe_collection("docbeam_chunks")["fields"] if f["name"] == "embedding")
        m.close()
        out["milvus_lite"] = str(int(field["params"]["dim"]) * 4)
    else:
        out["milvus_lite"] = "refused"
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", help="documents to run instead of samples/docs (no labelled questions then)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stores", action="store_true", help="also write each format to Qdrant local and Milvus Lite")
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="vector-formats-"))
    inputs = a.input or str(SAMPLES / "*")
    base = str(tmp / "float32-384")
    run_job(inputs, base)
    qs = questions() if not a.input else []
    if a.input:
        chunks = open_run(base)
        texts = [r["text"] for r in read_rows(chunks, list(range(min(200, chunks.n_rows))), ("text",)).values()]
        query_texts = [t.split(". ")[0][:200] for t in texts if t]
    else:
        query_texts = [q["q"] for q in qs]
    vectors = embed_queries(open_run(base).manifest["model"], query_texts)
    truth = ranked(base, vectors)
    rows_out = []
    for dims in DIMS:
        for dtype in VECTOR_DTYPES:
            run = base if (dims, dtype) == (384, "float32") else str(tmp / f"{dtype}-{dims}")
            flags = ["--dims", str(dims), "--vector-dtype", dtype]
            if run != base:
                run_job(inputs, run, "--reuse", base, *flags)
            col, whole = embedding_bytes(run)
            rows = ranked(run, vectors)
            rec = float(np.mean([len(set(r) & set(t)) / K for r, t in zip(rows, truth)]))
            lat = [latency_ms(run, vectors) for _ in range(a.rounds)]
            row = {
                "dims": dims,
                "dtype": dtype,
                "bytes_vector": open_run(run).vector_format.bytes_per_vector,
                "parquet_embedding_bytes_per_chunk": round(col, 1),
                "parquet_chunk_file_bytes_per_chunk": round(whole, 1),
                "recall_at_10_vs_float32": round(rec, 3),
                "answer_recall_at_10": round(answer_recall(run, rows, qs), 3) if qs else None,
                "ms_per_query": round(statistics.median(lat), 3),
                "ms_min_max": [round(min(lat), 3), round(max(lat), 3)],
            }
            if a.stores:
                row["store_vector_bytes"] = store_bytes(flags, inputs, base, tmp, dtype, dims)
            rows_out.append(row)
            print(json.dumps(row), flush=True)
    chunks = open_run(base).n_rows
    print(f"\n{chunks} chunks, {len(query_texts)} queries; CPU: {cpu_name()} ({os.cpu_count()} cores)")
    print(
        "| dims | dtype | bytes/vector | Parquet embedding B/chunk | recall@10 vs float32 "
        "| answer recall@10 | ms/query |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows_out:
        lo, hi = r["ms_min_max"]
        answer = "" if r["answer_recall_at_10"] is None else f"{r['answer_recall_at_10']:.2f}"
        print(
            f"| {r['dims']} | {r['dtype']} | {r['bytes_vector']} | {r['parquet_embedding_bytes_per_chunk']:.0f} | "
            f"{r['recall_at_10_vs_float32']:.3f} | {answer} | {r['ms_per_query']:.2f} ({lo:.2f}-{hi:.2f}) |"
        )


if __name__ == "__main__":
    main()
