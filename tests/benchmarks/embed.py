"""Throughput benchmark: docbeam against what users would otherwise run, side by side.

    python -m tests.benchmarks.embed [--docs 600] [--repeats 3] [--corpora uniform,mixed]
                                     [--input FILE.jsonl] [--json OUT.json] [-- docbeam flags]

On each corpus, in one run, each method in its own process (so peak RSS is its own), every
method repeated (`--repeats`, interleaved: one round of all methods, then the next, so drift
hits all alike); the median is reported with the spread (min-max):
  docbeam:float32, docbeam:bfloat16   docbeam run, end to end on DirectRunner
  mltransform                         Beam MLTransform + SentenceTransformerEmbeddings
  st:float32, st:bfloat16             sentence-transformers encode (torch CPU, all cores)
  onnxruntime:float32, onnxruntime:int8
                                      ONNX Runtime as fastembed runs it (its session settings,
                                      batches of 256 in corpus order padded to the longest,
                                      mean pooling in numpy) on the checkpoint exported with
                                      torch.onnx, once per run into the run's temporary folder
                                      (not timed); int8: onnxruntime's dynamic quantisation of
                                      that export. fastembed itself caps huggingface-hub < 2,
                                      docbeam needs >= 2.4: it cannot install beside docbeam
  ceiling                             matmul rates measured now: float32, and bfloat16
                                      inputs accumulating in float32 (what docbeam's dense
                                      layers run); MFU = achieved / (rate / FLOPs per token)
A method may carry environment settings in brackets, to measure what a setting buys side by
side with the default: `docbeam:float32[RAYON_NUM_THREADS=1]` (the tokenizer's pool on one
thread), `docbeam:float32[XLA_FLAGS=--xla_cpu_multi_thread_eigen=false]`, and docbeam flags:
`docbeam:float32[--direct_running_mode=multi_threading --direct_num_workers=2]`.
Corpora: `uniform` (20-400 words) and `mixed` (70% of 5-60 words, 30% of 300-1,200 words:
many one-window documents and many multi-window ones). Tokens are the tokens each method ran
through the model: sentence-transformers (and MLTransform, which calls it) truncate at 256,
onnxruntime too (its own tokenizer's count, the same as sentence-transformers'), docbeam embeds
every window. Parity: docbeam's and onnxruntime's vector of every document that fits one window
against sentence-transformers float32's, minimum cosine per method, and onnxruntime:int8's
against onnxruntime:float32's (what the quantising alone costs).
Only ratios measured in the same run mean anything on a shared machine.
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CPUS = os.cpu_count() or 1
# The ONNX export the onnxruntime workers load, made once per run by the driver (like compilation,
# not timed); a worker started without it exports its own.
ONNX_DIR = "DOCBEAM_BENCH_ONNX_DIR"


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _texts(corpus: Path) -> list[dict]:
    return [json.loads(line) for line in corpus.read_text().splitlines() if line.strip()]


def _truncated_tokens(texts: list[str], limit: int = 256) -> int:
    from docbeam.model.checkpoint import default_checkpoint_dir
    from docbeam.model.tokenizer import load_tokenizer

    tok, _ = load_tokenizer(default_checkpoint_dir())
    return sum(min(len(e.ids) + 2, limit) for e in tok.encode_batch(texts, add_special_tokens=False))


# -- workers (each runs in its own process) ---------------------------------------------------


def worker_docbeam(corpus: Path, out: Path, dtype: str, extra: list[str]) -> dict:
    import numpy as np

    from docbeam.pipeline.io import outputs
    from docbeam.pipeline.launch.running.job import run

    t0 = time.perf_counter()
    res = run(
        [
            "--input",
            str(corpus),
            "--output",
            str(out / "run"),
            "--overwrite",
            "--dtype",
            dtype,
            "--no-store-text",
            *extra,
        ]
    )
    wall = time.perf_counter() - t0
    enc = res.stage_totals["encode"]
    n = outputs.read_table(str(out / "run"), "chunks", ["n_tokens"]).column("n_tokens").to_numpy().astype(float)
    docs = outputs.read_table(str(out / "run"), "documents", ["doc_id", "n_chunks", "embedding"]).to_pylist()
    one = [d for d in docs if d["n_chunks"] == 1]
    np.savez(out / "vectors.npz", ids=[d["doc_id"] for d in one], vecs=np.array([d["embedding"] for d in one]))
    return {
        "context": float((n * n).sum() / n.sum()),  # mean segment length seen by a token
        "docs": res.manifest["counts"]["ok"],
        "tokens": enc["tokens"],
        "wall_s": wall,
        "padding": enc["pad_tokens"] / (enc["tokens"] + enc["pad_tokens"]),
        "compilations": enc.get("compilations", 0),
        "compile_s": enc.get("compile_us", 0) / 1e6,
        # The encode stage's own seconds (dispatch and waiting): on a CPU split into devices the
        # encoder computes inside dispatch, so the wait alone (device_us) is no longer its time.
        "encode_s": enc["wall_us"] / 1e6,
    }


def worker_mltransform(corpus: Path, out: Path, dtype: str, extra: list[str]) -> dict:
    import apache_beam as beam
    from apache_beam.ml.transforms.base import MLTransform
    from apache_beam.ml.transforms.embeddings.huggingface import SentenceTransformerEmbeddings
    from apache_beam.options.pipeline_options import PipelineOptions

    from docbeam.model.checkpoint import default_checkpoint_dir
    from docbeam.pipeline.graph.runners import resolve

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


def worker_st(corpus: Path, out: Path, dtype: str, extra: list[str]) -> dict:
    import numpy as np
    import torch

    from tests.reference import st_model

    torch.set_num_threads(CPUS)
    docs = _texts(corpus)
    texts = [d["text"] for d in docs]
    model = st_model()
    if dtype == "bfloat16":
        model = model.to(torch.bfloat16)  # torch's oneDNN bf16 path
    model.encode(texts[:32])  # warm-up, like docbeam's compile
    t0 = time.perf_counter()
    vecs = model.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=False)
    wall = time.perf_counter() - t0
    vecs = torch.stack(vecs).float().numpy()
    np.savez(out / "vectors.npz", ids=[d["id"] for d in docs], vecs=vecs)
    return {"docs": len(vecs), "tokens": _truncated_tokens(texts), "wall_s": wall}


def worker_onnxruntime(corpus: Path, out: Path, dtype: str, extra: list[str]) -> dict:
    """ONNX Runtime on the ONNX export of the same checkpoint, run as fastembed runs it (fastembed
    itself cannot install beside docbeam's huggingface-hub): its session settings and default
    batch of 256 in corpus order, the tokenizer truncating at sentence-transformers' window and
    padding to each batch's longest, mean pooling over the mask and normalising in numpy.
    float32, or the dynamically quantised int8 copy."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

    from docbeam.model.checkpoint import default_checkpoint_dir, trained_window
    from tests.benchmarks import onnx_export

    folder = Path(os.environ.get(ONNX_DIR) or onnx_export.export(out / "onnx", int8=dtype == "int8"))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    model_file = {"float32": onnx_export.FLOAT32, "int8": onnx_export.INT8}[dtype]
    session = ort.InferenceSession(str(folder / model_file), options, providers=["CPUExecutionProvider"])
    ckpt = default_checkpoint_dir()
    tok = Tokenizer.from_file(str(ckpt / "tokenizer.json"))
    pad = tok.padding or {}  # the file pads to a fixed 128: to each batch's longest instead
    tok.enable_padding(pad_id=pad.get("pad_id", 0), pad_token=pad.get("pad_token", "[PAD]"))
    tok.enable_truncation(max_length=trained_window(ckpt) or 256)

    def embed(texts: list[str], batch_size: int = 256) -> tuple[np.ndarray, list]:
        vecs, encodings = [], []
        for start in range(0, len(texts), batch_size):
            enc = tok.encode_batch(texts[start : start + batch_size])
            ids = np.array([e.ids for e in enc], np.int64)
            mask = np.array([e.attention_mask for e in enc], np.int64)
            (hidden,) = session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )
            pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
            vecs.append(pooled / np.linalg.norm(pooled, axis=1, keepdims=True))
            encodings += enc
        return np.concatenate(vecs).astype(np.float32), encodings

    docs = _texts(corpus)
    texts = [d["text"] for d in docs]
    embed(texts[:32])  # warm-up, like sentence-transformers'
    t0 = time.perf_counter()
    vecs, enc = embed(texts)
    wall = time.perf_counter() - t0
    # The tokens it ran (its own tokenizer, truncating at 256: the count sentence-transformers'
    # methods report); parity only over the documents that fit one window, as docbeam's.
    one = [i for i, e in enumerate(enc) if not e.overflowing]
    np.savez(out / "vectors.npz", ids=[docs[i]["id"] for i in one], vecs=vecs[one])
    return {"docs": len(vecs), "tokens": sum(sum(e.attention_mask) for e in enc), "wall_s": wall}


def worker_ceiling(corpus: Path, out: Path, dtype: str, extra: list[str]) -> dict:
    """Matmul rates: float32, and bfloat16 inputs with a float32 accumulator (model/layers.dense)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    n = 2048
    a = jnp.asarray(np.random.default_rng(0).standard_normal((n, n), np.float32))
    b = a.astype(jnp.bfloat16)
    f32 = jax.jit(lambda x: x @ x)
    bf16 = jax.jit(lambda x: jnp.matmul(x, x, preferred_element_type=jnp.float32))
    rates = {}
    for name, fn, arg in (("f32_gflops", f32, a), ("bf16_gflops", bf16, b)):
        fn(arg).block_until_ready()
        rates[name] = 2 * n**3 / min(_timed(lambda f=fn, x=arg: f(x).block_until_ready()) for _ in range(10)) / 1e9
    return rates


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


WORKERS = {
    "docbeam": worker_docbeam,
    "mltransform": worker_mltransform,
    "st": worker_st,
    "onnxruntime": worker_onnxruntime,
    "ceiling": worker_ceiling,
}


# -- driver -----------------------------------------------------------------------------------


def split_method(method: str) -> tuple[str, dict[str, str], list[str]]:
    """ "docbeam:float32[A=1 --flag=x]" -> ("docbeam:float32", {"A": "1"}, ["--flag=x"]):
    environment settings, and flags for that method's docbeam run."""
    name, _, rest = method.partition("[")
    items = rest.rstrip("]").split()
    bad = [kv for kv in items if "=" not in kv]
    if bad:
        raise SystemExit(f"{method}: settings in brackets are NAME=VALUE or --flag=value, not {' '.join(bad)}")
    env = dict(kv.split("=", 1) for kv in items if not kv.startswith("--"))
    return name, env, [kv for kv in items if kv.startswith("--")]


def cpu_line() -> str:
    """The CPU the figures were measured on: its name, cores and the features that decide speed."""
    from docbeam.pipeline.core.cpu_features import cpu_name, cpuinfo_flags

    wanted = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile", "amx_bf16")
    have = [f for f in wanted if f in cpuinfo_flags()]
    return f"CPU: {cpu_name()}, {CPUS} cores; features: {' '.join(have) or 'none of ' + ' '.join(wanted)}"


def _spawn(method: str, corpus: Path, out: Path, extra: list[str]) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    name, env, flags = split_method(method)
    cmd = [sys.executable, "-m", "tests.benchmarks.embed", "--worker", name]
    cmd += ["--corpus", str(corpus), "--out", str(out), "--", *extra, *flags]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1", **env})
    lines = proc.stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise RuntimeError(f"{method} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    if proc.returncode:  # the measurement finished; the process died on the way out
        print(f"warning: {method} exited {proc.returncode} after reporting: {proc.stderr[-300:]}", file=sys.stderr)
    return json.loads(lines[-1])


def build_corpus_file(path: Path, docs: int, mix: str) -> Path:
    import random

    from tests.corpus import build_corpus

    if mix == "uniform":
        rows = build_corpus(docs, seed=0)
    else:
        rng = random.Random(1)
        short = build_corpus(docs, seed=1, min_words=5, max_words=60)
        long = build_corpus(docs, seed=2, min_words=300, max_words=1200)
        rows = [(short if rng.random() < 0.7 else long)[i] for i in range(docs)]
    path.write_text("".join(json.dumps(d) + "\n" for d in rows))
    return path


METHODS = "ceiling,docbeam:float32,docbeam:bfloat16,mltransform,st:float32,st:bfloat16"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=600, help="documents per built-in corpus")
    ap.add_argument("--corpora", default="uniform,mixed", help="built-in corpora to run (uniform, mixed)")
    ap.add_argument("--input", help="a JSONL file (id, text) instead of the built-in corpora")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--methods", default=METHODS)
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--corpus", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    ap.add_argument("extra", nargs="*", help="extra flags for docbeam run (after --)")
    args = ap.parse_args()
    if args.worker:
        name, _, dtype = args.worker.partition(":")
        result = WORKERS[name](Path(args.corpus), Path(args.out), dtype or "float32", args.extra)
        result["peak_rss_mib"] = _rss_mib()
        print(json.dumps(result))
        return 0
    report = {"cpu": cpu_line()}
    print(report["cpu"], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        # docbeam's compiled executables go to a cache of this run's own: its first round
        # compiles every shape, later rounds find them (as on a machine that runs docbeam
        # daily), much as sentence-transformers' warm-up is left out of its time.
        os.environ["DOCBEAM_COMPILE_CACHE"] = str(Path(tmp) / "xla")
        onnx = [split_method(m)[0] for m in args.methods.split(",") if m.startswith("onnxruntime")]
        if onnx:  # once for the run, outside any timing
            from tests.benchmarks import onnx_export

            int8 = "onnxruntime:int8" in onnx
            os.environ[ONNX_DIR] = str(onnx_export.export(Path(tmp) / "onnx", int8=int8))
        corpora = {"input": Path(args.input)} if args.input else {}
        for mix in [] if args.input else args.corpora.split(","):
            corpora[mix] = build_corpus_file(Path(tmp) / f"{mix}.jsonl", args.docs, mix)
        for label, corpus in corpora.items():
            runs: dict[str, list[dict]] = {}
            for r in range(args.repeats):
                for method in args.methods.split(","):
                    print(f"{label}: {method} (round {r + 1}/{args.repeats}) ...", file=sys.stderr, flush=True)
                    folder = Path(tmp) / label / re.sub(r"[^\w:.-]+", "_", method)  # no glob characters
                    runs.setdefault(method, []).append(_spawn(method, corpus, folder, args.extra))
            report[label] = {"runs": runs, "parity": _parity(Path(tmp) / label)}
            print(f"\n== corpus {label}: {sum(1 for _ in corpus.open())} documents; {report['cpu']}")
            print(render(report[label]))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


# (method, reference): each method's one-window document vectors against sentence-transformers
# float32's, and onnxruntime's int8 against its own float32 as well (what quantising alone costs).
PARITY = (
    ("docbeam:float32", "st:float32"),
    ("docbeam:bfloat16", "st:float32"),
    ("st:bfloat16", "st:float32"),
    ("onnxruntime:float32", "st:float32"),
    ("onnxruntime:int8", "st:float32"),
    ("onnxruntime:int8", "onnxruntime:float32"),
)


def _parity(where: Path) -> dict:
    """Minimum cosine of each method's one-window document vectors to its reference's."""
    import numpy as np

    out = {}
    for method, reference in PARITY:
        ref_file, f = where / reference / "vectors.npz", where / method / "vectors.npz"
        if ref_file.exists() and f.exists():
            ref, got = np.load(ref_file), np.load(f)
            by_id = dict(zip(ref["ids"].tolist(), ref["vecs"], strict=True))
            cos = [float(v @ by_id[i]) for i, v in zip(got["ids"].tolist(), got["vecs"], strict=True) if i in by_id]
            out[f"{method} vs {reference}"] = {"docs": len(cos), "min_cosine": min(cos)}
    return out


def _median(xs: list[float]) -> float:
    return statistics.median(xs)


def render(rep: dict) -> str:
    from docbeam.model import flops_per_token, read_config
    from docbeam.model.checkpoint import default_checkpoint_dir

    runs = rep["runs"]
    rates = {}
    lines = [f"{'method':<22}{'tokens/s':>10}{'spread':>18}{'docs/s':>8}{'pad':>6}{'RSS':>8}"]
    for method, rs in runs.items():
        if method == "ceiling":
            continue
        tps = [r["tokens"] / r["wall_s"] for r in rs]
        rates[method] = _median(tps)
        pad = f"{rs[0]['padding']:.1%}" if "padding" in rs[0] else "-"
        lines.append(
            f"{method:<22}{rates[method]:>10,.0f}{f'{min(tps):,.0f}-{max(tps):,.0f}':>18}"
            f"{_median([r['docs'] / r['wall_s'] for r in rs]):>8.1f}{pad:>6}"
            f"{max(r['peak_rss_mib'] for r in rs):>6,.0f}Mi"
        )

    def ratio(a: str, b: str) -> None:
        if a in runs and b in runs:
            per_round = [
                (x["tokens"] / x["wall_s"]) / (y["tokens"] / y["wall_s"]) for x, y in zip(runs[a], runs[b], strict=True)
            ]
            lines.append(
                f"{a} / {b}: {rates[a] / rates[b]:.2f}x (per round {', '.join(f'{q:.2f}' for q in per_round)})"
            )

    for a, b in (
        ("docbeam:float32", "st:float32"),
        ("docbeam:float32", "mltransform"),
        ("docbeam:bfloat16", "st:bfloat16"),
        ("st:bfloat16", "st:float32"),
        ("docbeam:bfloat16", "docbeam:float32"),
        ("onnxruntime:float32", "st:float32"),
        ("docbeam:float32", "onnxruntime:float32"),
        ("onnxruntime:int8", "onnxruntime:float32"),
        *((m, split_method(m)[0]) for m in runs if "[" in m),  # a setting against the default
    ):
        ratio(a, b)
    for method in ("docbeam:float32", "docbeam:bfloat16"):
        if method in runs:
            rs = runs[method]
            wall, dev = _median([r["wall_s"] for r in rs]), _median([r["encode_s"] for r in rs])
            compile_s = [r["compile_s"] for r in rs]
            rest = wall - dev - _median(compile_s)
            lines.append(
                f"{method} wall {wall:.1f} s: encoder {dev:.1f} s, compiling "
                f"{', '.join(f'{c:.1f}' for c in compile_s)} s per round (round 1: empty cache), "
                f"the rest (start-up, host work not hidden, writing) {rest:.1f} s"
            )
            st = runs.get(f"st:{method.partition(':')[2]}")
            if st:  # the encoder stage alone against sentence-transformers' whole encode, per round
                pairs = zip(rs, st, strict=True)
                enc = [r["tokens"] / r["encode_s"] / (s["tokens"] / s["wall_s"]) for r, s in pairs]
                lines.append(
                    f"{method} encoder stage / st: {_median(enc):.2f}x (per round {', '.join(f'{q:.2f}' for q in enc)})"
                )
    for method, p in rep["parity"].items():
        lines.append(f"parity {method}: min cosine {p['min_cosine']:.6f} over {p['docs']} documents")
    if "ceiling" in runs:
        cfg = read_config(default_checkpoint_dir())
        for dtype, key in (("float32", "f32_gflops"), ("bfloat16", "bf16_gflops")):
            d = runs.get(f"docbeam:{dtype}")
            if not d:
                continue
            peak = max(r[key] for r in runs["ceiling"]) * 1e9  # the higher rate: the conservative MFU
            fpt = flops_per_token(cfg, _median([r["context"] for r in d]))
            ceiling = peak / fpt
            enc = _median([r["tokens"] / r["encode_s"] for r in d])
            lines.append(
                f"{dtype} ceiling {ceiling:,.0f} tokens/s = {peak / 1e9:.0f} GFLOP/s matmul / "
                f"{fpt / 1e6:.1f} MFLOP per token; MFU {rates[f'docbeam:{dtype}'] / ceiling:.0%} end to end, "
                f"{enc / ceiling:.0%} inside the encoder stage"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
