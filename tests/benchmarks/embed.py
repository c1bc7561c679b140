"""Throughput benchmark: docbeam against what users would otherwise run, side by side.

    python -m tests.benchmarks.embed [--docs 2000] [--input GLOB] [--json OUT.json]

On the same corpus, in one run, each method in its own process (so peak RSS is its own):
  1. docbeam run, end to end on DirectRunner
  2. Beam MLTransform + SentenceTransformerEmbeddings (same model directory), DirectRunner
  3. sentence-transformers encode, directly (torch CPU, all cores)
  4. the ceiling: tokens/s implied by the encoder's FLOPs per token and the float32
     matmul rate measured on this machine now (MFU = achieved / ceiling)
Tokens are the tokens each method actually ran through the model: sentence-transformers
(and MLTransform, which calls it) truncate at 256, docbeam embeds every window.
Only ratios measured in the same run mean anything on a shared machine.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CPUS = os.cpu_count() or 1


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _texts(corpus: Path) -> list[dict]:
    return [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]


def _truncated_tokens(texts: list[str], limit: int = 256) -> int:
    from model.checkpoint import default_checkpoint_dir
    from model.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(default_checkpoint_dir())
    return sum(min(len(e.ids) + 2, limit) for e in tok.encode_batch(texts, add_special_tokens=False))


# -- workers (each runs in its own process) ---------------------------------------------------


def worker_docbeam(corpus: Path, out: Path, extra: list[str]) -> dict:
    from pipeline.io import outputs
    from pipeline.launch.job import run

    t0 = time.perf_counter()
    res = run(["--input", str(corpus), "--output", str(out), "--overwrite", *extra])
    wall = time.perf_counter() - t0
    enc = res.stage_totals["encode"]
    n = outputs.read_table(str(out), "chunks", ["n_tokens"]).column("n_tokens").to_numpy().astype(float)
    return {
        "context": float((n * n).sum() / n.sum()),  # mean segment length seen by a token
        "docs": res.manifest["counts"]["ok"],
        "tokens": enc["tokens"],
        "wall_s": wall,
        "padding": enc["pad_tokens"] / (enc["tokens"] + enc["pad_tokens"]),
        "compilations": enc["compilations"],
        "encode_device_s": enc["device_us"] / 1e6,
    }


def worker_mltransform(corpus: Path, out: Path, extra: list[str]) -> dict:
    import apache_beam as beam
    from apache_beam.ml.transforms.base import MLTransform
    from apache_beam.ml.transforms.embeddings.huggingface import SentenceTransformerEmbeddings
    from apache_beam.options.pipeline_options import PipelineOptions

    from model.checkpoint import default_checkpoint_dir
    from pipeline.graph.runners import resolve

    docs = _texts(corpus)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as artifacts:
        options = PipelineOptions([])
        with beam.Pipeline(runner=resolve(options), options=options) as p:
            _ = (
                p
                | beam.io.ReadFromText(str(corpus))
                | beam.Map(json.loads)
                | beam.Map(lambda d: {"id": d["id"], "text": d["text"]})
                | MLTransform(write_artifact_location=artifacts).with_transform(
                    SentenceTransformerEmbeddings(model_name=str(default_checkpoint_dir()), columns=["text"])
                )
                | beam.Map(lambda d: json.dumps({"id": d["id"], "embedding": [float(x) for x in d["text"]]}))
                | beam.io.WriteToText(str(out / "vectors"), file_name_suffix=".jsonl")
            )
    wall = time.perf_counter() - t0
    rows = sum(len(p.read_text().splitlines()) for p in out.glob("vectors*.jsonl"))
    return {"docs": rows, "tokens": _truncated_tokens([d["text"] for d in docs]), "wall_s": wall}


def worker_st(corpus: Path, out: Path, extra: list[str]) -> dict:
    import torch

    from tests.reference import st_model

    torch.set_num_threads(CPUS)
    texts = [d["text"] for d in _texts(corpus)]
    model = st_model()
    model.encode(texts[:32])  # warm-up, like docbeam's compile
    t0 = time.perf_counter()
    vecs = model.encode(texts, batch_size=32, normalize_embeddings=True)
    wall = time.perf_counter() - t0
    return {"docs": len(vecs), "tokens": _truncated_tokens(texts), "wall_s": wall}


def worker_ceiling(corpus: Path, out: Path, extra: list[str]) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    n = 2048
    a = jnp.asarray(np.random.default_rng(0).standard_normal((n, n), np.float32))
    f = jax.jit(lambda x: x @ x)
    f(a).block_until_ready()
    best = min(_timed(lambda: f(a).block_until_ready()) for _ in range(10))
    an = np.asarray(a)
    best_np = min(_timed(lambda: an @ an) for _ in range(10))
    return {"jax_gflops": 2 * n**3 / best / 1e9, "numpy_gflops": 2 * n**3 / best_np / 1e9}


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


WORKERS = {"docbeam": worker_docbeam, "mltransform": worker_mltransform, "st": worker_st, "ceiling": worker_ceiling}


# -- driver -----------------------------------------------------------------------------------


def _spawn(name: str, corpus: Path, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as out:
        cmd = [
            sys.executable,
            "-m",
            "tests.benchmarks.embed",
            "--worker",
            name,
            "--corpus",
            str(corpus),
            "--out",
            out,
            "--",
            *extra,
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        lines = proc.stdout.strip().splitlines()
        if not lines or not lines[-1].startswith("{"):
            raise RuntimeError(f"{name} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
        if proc.returncode:  # the measurement finished; the process died on the way out
            print(f"warning: {name} exited {proc.returncode} after reporting: {proc.stderr[-300:]}", file=sys.stderr)
        return json.loads(lines[-1])


def build_corpus_file(path: Path, docs: int) -> Path:
    from tests.corpus import build_corpus

    path.write_text("".join(json.dumps(d) + "\n" for d in build_corpus(docs, seed=0)))
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=2000, help="size of the built-in corpus (20-400 words each)")
    ap.add_argument("--input", help="a JSONL file (id, text) instead of the built-in corpus")
    # The matmul rate is measured first and last and the higher kept: the machine's speed
    # drifts (shared cores), and the higher ceiling gives the more conservative MFU.
    ap.add_argument("--methods", default="ceiling,docbeam,mltransform,st,ceiling")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("extra", nargs="*", help="extra flags for docbeam run (after --)")
    args = ap.parse_args()
    if args.worker:
        result = WORKERS[args.worker](Path(args.corpus), Path(args.out), args.extra)
        result["peak_rss_mib"] = _rss_mib()
        print(json.dumps(result))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(args.input) if args.input else build_corpus_file(Path(tmp) / "corpus.jsonl", args.docs)
        results = {}
        for name in args.methods.split(","):
            print(f"running {name} ...", file=sys.stderr, flush=True)
            result = _spawn(name, corpus, args.extra)
            if name == "ceiling" and name in results:
                result = {k: max(v, results[name][k]) for k, v in result.items()}
            results[name] = result
    print(render(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


def render(results: dict) -> str:
    from model import flops_per_token, read_config
    from model.checkpoint import default_checkpoint_dir

    cfg = read_config(default_checkpoint_dir())
    lines = [f"{'method':<14}{'docs/s':>9}{'tokens/s':>11}{'padding':>9}{'compiles':>9}{'peak RSS':>10}"]
    for name in ("docbeam", "mltransform", "st"):
        r = results.get(name)
        if not r:
            continue
        r["docs_per_s"], r["tokens_per_s"] = r["docs"] / r["wall_s"], r["tokens"] / r["wall_s"]
        pad = f"{r['padding']:.1%}" if "padding" in r else "-"
        lines.append(
            f"{name:<14}{r['docs_per_s']:>9.1f}{r['tokens_per_s']:>11,.0f}{pad:>9}"
            f"{r.get('compilations', '-'):>9}{r['peak_rss_mib']:>8,.0f}Mi"
        )
    d = results.get("docbeam")
    if d:
        for other in ("mltransform", "st"):
            if other in results:
                lines.append(
                    f"docbeam / {other:<12} {d['tokens_per_s'] / results[other]['tokens_per_s']:.2f}x tokens/s"
                )
    c = results.get("ceiling")
    if c and d:
        # Model FLOPs: attention over each token's own segment (not the padded row).
        fpt = flops_per_token(cfg, d["context"])
        peak = max(c["jax_gflops"], c["numpy_gflops"]) * 1e9
        ceiling = peak / fpt
        lines.append(
            f"ceiling        {ceiling:,.0f} tokens/s = {peak / 1e9:.0f} GFLOP/s fp32 matmul "
            f"(jax {c['jax_gflops']:.0f}, numpy {c['numpy_gflops']:.0f}) / {fpt / 1e6:.1f} MFLOP per token"
        )
        lines.append(
            f"MFU            {d['tokens_per_s'] / ceiling:.0%} end to end; "
            f"{d['tokens'] / d['encode_device_s'] / ceiling:.0%} inside the encoder stage"
        )
        results["mfu"] = {
            "end_to_end": d["tokens_per_s"] / ceiling,
            "encoder": d["tokens"] / d["encode_device_s"] / ceiling,
            "flops_per_token": fpt,
            "ceiling_tokens_per_s": ceiling,
        }
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
