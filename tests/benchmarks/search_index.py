"""Exact search against approximate indexes, on SYNTHETIC clustered vectors (and the run's own
real vectors with --run): latency per query, memory, recall@10 against exact, build time.

    python -m tests.benchmarks.search_index --sizes 100000 1000000 --rounds 3
    python -m tests.benchmarks.search_index --sizes 100000 --rounds 1 --hnsw   # + HNSW (slow to build)
    python -m tests.benchmarks.search_index --make-real-corpus DIR           # real text to run docbeam on
    python -m tests.benchmarks.search_index --run OUT --rounds 3              # a run's real chunk vectors

Synthetic vectors, dim 384, L2-normalised, clustered like sentence embeddings rather than
uniform on the sphere: 2,000 cluster centres drawn uniformly on the sphere, cluster sizes
Zipf-distributed (a few topics hold many chunks), each vector its centre plus Gaussian noise
(per-cluster sigma from 0.03 to 0.07 per coordinate: cosine to its centre 0.6-0.9), then
normalised; queries are 200 fresh draws from the same mixture. Each round draws the data anew
(seed = round). Printed: the median over rounds with (min-max).
"""

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

from docbeam.pipeline.search import index as ivf
from docbeam.pipeline.search.topk import exact_topk

DIM, K, QUERIES = 384, 10, 200


def clustered(n: int, seed: int, centres: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, DIM)).astype(np.float32)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    weight = 1.0 / np.arange(1, centres + 1) ** 0.8
    sigma = rng.uniform(0.03, 0.07, centres).astype(np.float32)

    def draw(m: int) -> np.ndarray:
        out = np.empty((m, DIM), np.float32)
        for i in range(0, m, 65536):
            lab = rng.choice(centres, size=min(65536, m - i), p=weight / weight.sum())
            part = c[lab] + rng.normal(size=(len(lab), DIM)).astype(np.float32) * sigma[lab, None]
            out[i : i + len(lab)] = part / np.linalg.norm(part, axis=1, keepdims=True)
        return out

    return draw(n), draw(QUERIES)


def real_vectors(run: str) -> tuple[np.ndarray, np.ndarray]:
    from docbeam.pipeline.search.run_chunks import embedding_blocks, open_run

    x = np.concatenate([b for _, b in embedding_blocks(open_run(run))])
    rng = np.random.default_rng(0)
    q = x[rng.choice(len(x), size=min(QUERIES, len(x)), replace=False)]
    q = q + rng.normal(size=q.shape).astype(np.float32) * 0.02  # near, not equal to, a stored chunk
    return x, q


# Real text on any machine with Python: the language reference's topics, the stdlib's own
# documentation as pydoc renders it, and the licence texts Debian ships (when present).
STDLIB_MODULES = (
    "argparse asyncio collections concurrent.futures contextlib csv dataclasses datetime decimal email "
    "functools http.client itertools json logging multiprocessing os pathlib pickle re shutil socket sqlite3 "
    "statistics string subprocess tarfile threading typing unittest urllib.request xml.etree.ElementTree zipfile"
).split()


def make_real_corpus(folder: str) -> int:
    import json
    import pathlib
    import pydoc
    import pydoc_data.topics

    out = pathlib.Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    rows = [{"id": f"topic:{k}", "text": v} for k, v in sorted(pydoc_data.topics.topics.items())]
    for name in STDLIB_MODULES:
        rows.append({"id": f"pydoc:{name}", "text": pydoc.render_doc(name, renderer=pydoc.plaintext)})
    for lic in sorted(pathlib.Path("/usr/share/common-licenses").glob("*")):
        if lic.is_file() and not lic.is_symlink():
            rows.append({"id": f"license:{lic.name}", "text": lic.read_text(errors="replace")})
    (out / "real.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return len(rows)


def recall(approx: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(e)) / len(e) for a, e in zip(approx, exact)]))


def per_query_ms(fn, queries: np.ndarray) -> float:
    t = time.perf_counter()
    for q in queries:
        fn(q[None])
    return (time.perf_counter() - t) * 1000 / len(queries)


def one_round(x: np.ndarray, q: np.ndarray, hnsw: bool, nprobes: list[int]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    _, truth = exact_topk(q, ivf.iter_rows(x), K)
    # Exact in blocks of 8,192 rows (what docbeam search does), vectors in memory: the scan alone.
    ms = per_query_ms(lambda v: exact_topk(v, ivf.iter_rows(x), K), q[:20])
    out["exact (blocks of 8,192)"] = {"ms": ms, "mem_mb": 8192 * DIM * 4 / 2**20, "recall": 1.0, "build_s": 0.0}
    t = time.perf_counter()
    index = ivf.build_ivf(lambda: ivf.iter_rows(x), len(x), DIM)
    build = time.perf_counter() - t
    with tempfile.TemporaryDirectory() as tmp:
        import faiss

        path = os.path.join(tmp, "chunks.faiss")
        faiss.write_index(index, path)
        size = os.path.getsize(path) / 2**20
        mapped = faiss.read_index(path, faiss.IO_FLAG_MMAP)
        for nprobe in nprobes:
            _, rows = ivf.search_ivf(mapped, q, K, nprobe)
            ms = per_query_ms(lambda v, n=nprobe, m=mapped: ivf.search_ivf(m, v, K, n), q)
            name = f"faiss IVF-Flat, {index.nlist} lists, nprobe {nprobe}"
            out[name] = {"ms": ms, "mem_mb": size, "recall": recall(rows, truth), "build_s": build}
        del mapped
    if hnsw:
        from usearch.index import Index

        t = time.perf_counter()
        h = Index(ndim=DIM, metric="ip", dtype="f32", connectivity=16, expansion_add=128, expansion_search=64)
        h.add(np.arange(len(x)), x, threads=os.cpu_count() or 1)
        build = time.perf_counter() - t
        rows = h.search(q, K).keys
        ms = per_query_ms(lambda v: h.search(v, K), q)
        out["usearch HNSW f32, M 16, ef 64"] = {
            "ms": ms,
            "mem_mb": h.memory_usage / 2**20,
            "recall": recall(rows, truth),
            "build_s": build,
        }
    return out


def fmt(values: list[float], spec: str) -> str:
    med = statistics.median(values)
    return f"{med:{spec}} ({min(values):{spec}}-{max(values):{spec}})" if len(values) > 1 else f"{med:{spec}}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nprobe", type=int, nargs="*", default=[8, 32])
    ap.add_argument("--hnsw", action="store_true", help="also usearch HNSW (minutes to build per 100k here)")
    ap.add_argument("--run", help="a run's --output: its real chunk vectors instead of synthetic ones")
    ap.add_argument("--make-real-corpus", metavar="DIR", help="write real text to DIR/real.jsonl and stop")
    a = ap.parse_args()
    if a.make_real_corpus:
        print(f"{make_real_corpus(a.make_real_corpus)} documents -> {a.make_real_corpus}/real.jsonl")
        return
    cases = [("real", None)] if a.run else [("synthetic", n) for n in a.sizes]
    for kind, n in cases:
        rounds = []
        for r in range(a.rounds):
            x, q = real_vectors(a.run) if a.run else clustered(n, seed=r)
            rounds.append(one_round(x, q, a.hnsw, a.nprobe))
            print(f"# {kind} n={len(x):,} round {r + 1} done", flush=True)
        print(f"\n{kind}, {len(x):,} vectors, dim {DIM}, {len(q)} queries, median of {a.rounds} (min-max):")
        print("| method | latency/query ms | memory MiB | recall@10 | build s |\n|---|---:|---:|---:|---:|")
        for name in rounds[0]:
            col = {f: [rd[name][f] for rd in rounds] for f in ("ms", "mem_mb", "recall", "build_s")}
            print(
                f"| {name} | {fmt(col['ms'], '.2f')} | {fmt(col['mem_mb'], '.0f')} | {fmt(col['recall'], '.3f')} "
                f"| {fmt(col['build_s'], '.1f')} |"
            )


if __name__ == "__main__":
    main()
