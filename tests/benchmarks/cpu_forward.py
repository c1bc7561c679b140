"""The encoder forward alone on this CPU: docbeam's XLA program against torch's, per CPU second.

    python -m tests.benchmarks.cpu_forward [--shapes 4x256,16x64] [--dtypes bfloat16,float32]
                                           [--repeats 3] [--iters 9]

The embed benchmark times whole commands; this one asks where the gap sits when there is one:
the forward on the CPU's own batch shapes (`--batch-rows` default: 1,024 tokens a batch, rows
of 256 and of 64), one document a row, the default model. Each method runs in its own process,
rounds interleaved; a round's figure is the median of `--iters` forwards, the table the median
of `--repeats` rounds with their spread. Timed in CPU seconds (all threads of the process) and
wall seconds. Compare on a quiet machine: torch's threads spin at their barriers while a busy
machine holds the other thread, so load inflates torch's CPU seconds far more than XLA's
(torch bfloat16 at [4, 256] here: 14,000 tokens per CPU second at load 2 on 2 cores, 2,400 at
load 5; docbeam's 10,000-11,000 at both).

  docbeam:DTYPE            the runtime's program (`embed_segments`, attention `xla_fused`)
  docbeam:DTYPE-no-attn    the same with attention replaced by its values: what attention costs
  torch:DTYPE              transformers' BertModel (sdpa attention), what sentence-transformers
                           runs, at the same dtype (bfloat16: torch's oneDNN path, AMX where the
                           CPU has it)
Parity: each docbeam vector against torch float32's mean-pooled one, minimum cosine.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

SHAPES = "4x256,16x64"


def _shapes(text: str) -> list[tuple[int, int]]:
    return [(int(r), int(t)) for r, t in (s.split("x") for s in text.split(","))]


def _docbeam(dtype: str, rows: int, seq: int, attention: bool):
    import jax
    import jax.numpy as jnp

    from docbeam.kernels import api as kernels
    from docbeam.model import embed_segments, load_checkpoint

    ckpt, params = load_checkpoint()
    params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float32 if a.ndim == 1 else dtype), params)
    shape = (rows, seq, ckpt.config.heads, ckpt.config.head_dim)
    attend = kernels.get("xla_fused", shape=shape, dtype=dtype).attend
    if not attention:

        def attend(q, k, v, *, segment_ids, scale=None, window=None):  # noqa: ARG001 (the contract's arguments)
            return v

    fn = jax.jit(
        lambda p, t, s, q: embed_segments(p, ckpt.config, t, s, q, attend=attend, max_segments=1, unit_norm=True)
    )
    seg = np.ones((rows, seq), np.int32)
    pos = np.broadcast_to(np.arange(seq, dtype=np.int32), (rows, seq)).copy()

    def run(tokens: np.ndarray) -> np.ndarray:
        return np.asarray(fn(params, tokens, seg, pos))[:, 0].astype(np.float32)

    return run


def _torch(dtype: str):
    import torch
    from transformers import AutoModel

    from docbeam.model.checkpoint import default_checkpoint_dir

    torch.set_num_threads(len(__import__("os").sched_getaffinity(0)))
    model = AutoModel.from_pretrained(str(default_checkpoint_dir()), dtype=getattr(torch, dtype)).eval()

    def run(tokens: np.ndarray) -> np.ndarray:
        ids = torch.from_numpy(tokens.astype(np.int64))
        with torch.inference_mode():
            h = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state.float()
        v = h.mean(1)
        return torch.nn.functional.normalize(v, dim=-1).numpy()

    return run


def _timed(fn, tokens) -> tuple[float, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    fn(tokens)
    return time.perf_counter() - t0, time.process_time() - c0


def _tokens(rows: int, seq: int) -> np.ndarray:
    tokens = np.random.default_rng(0).integers(1000, 20000, (rows, seq)).astype(np.int32)
    tokens[:, 0], tokens[:, -1] = 101, 102  # [CLS] ... [SEP], as the tokenizer frames a window
    return tokens


def worker(method: str, shapes: list[tuple[int, int]], iters: int) -> dict:
    """One method in this process: per shape, the vectors' parity to torch float32 and the
    median (wall, CPU) seconds of `iters` forwards after a warm-up."""
    name, _, dtype = method.partition(":")
    dtype, _, ablation = dtype.partition("-")
    out = {}
    for rows, seq in shapes:
        tokens = _tokens(rows, seq)
        fn = _torch(dtype) if name == "torch" else _docbeam(dtype, rows, seq, attention=ablation != "no-attn")
        vec = fn(tokens)  # the warm-up (docbeam: the compile)
        times = [_timed(fn, tokens) for _ in range(iters)]
        out[f"{rows}x{seq}"] = {
            "vectors": vec.tolist(),
            "wall_s": statistics.median(w for w, _ in times),
            "cpu_s": statistics.median(c for _, c in times),
        }
    return out


def measure(shapes: list[tuple[int, int]], dtypes: list[str], repeats: int, iters: int) -> dict:
    """Every method in its own process (no thread pool of one slows another's), rounds
    interleaved so the machine's drift hits every method alike."""
    methods = [m for d in dtypes for m in (f"docbeam:{d}", f"docbeam:{d}-no-attn", f"torch:{d}")]
    methods += [] if "float32" in dtypes else ["torch:float32"]  # the parity reference
    runs: dict[str, list[dict]] = {m: [] for m in methods}
    spec = ",".join(f"{r}x{t}" for r, t in shapes)
    for _ in range(repeats):
        for m in methods:
            cmd = [sys.executable, "-m", "tests.benchmarks.cpu_forward", "--worker", m, "--shapes", spec]
            done = subprocess.run([*cmd, "--iters", str(iters)], capture_output=True, text=True, check=True)
            runs[m].append(json.loads(done.stdout.strip().splitlines()[-1]))
    out = {}
    for rows, seq in shapes:
        key = f"{rows}x{seq}"
        reference = np.asarray(runs["torch:float32"][0][key]["vectors"])
        parity = {}
        for m in methods:
            if not m.endswith("-no-attn"):
                vec = np.asarray(runs[m][0][key]["vectors"])
                parity[m] = float(((vec * reference).sum(-1) / np.linalg.norm(vec, axis=-1)).min())
        times = {m: [(r[key]["wall_s"], r[key]["cpu_s"]) for r in runs[m]] for m in methods}
        out[key] = {"tokens": rows * seq, "times": times, "parity": parity}
    return out


def render(result: dict, cpu: str) -> str:
    lines = [cpu]
    for shape, r in result.items():
        n = r["tokens"]
        lines.append(f"\n== batch [{shape.replace('x', ', ')}], one document a row")
        lines.append(f"{'method':26s} {'tokens/CPU-s':>13s} {'spread':>15s} {'tokens/s':>9s}  parity")
        rate = {}
        for name, ts in r["times"].items():
            per_cpu = [n / c for _, c in ts]
            rate[name] = statistics.median(per_cpu)
            wall = statistics.median(n / w for w, _ in ts)
            par = f"{r['parity'][name]:.6f}" if name in r["parity"] else "-"
            spread = f"{min(per_cpu):,.0f}-{max(per_cpu):,.0f}"
            lines.append(f"{name:26s} {rate[name]:13,.0f} {spread:>15s} {wall:9,.0f}  {par}")
        for name in [m for m in rate if m.startswith("docbeam:") and not m.endswith("-no-attn")]:
            dtype = name.partition(":")[2]
            share = 1 - rate[name] / rate[f"{name}-no-attn"]
            lines.append(
                f"{name} / torch:{dtype}: {rate[name] / rate[f'torch:{dtype}']:.2f}x per CPU second; "
                f"attention {share:.0%} of docbeam's forward"
            )
    return "\n".join(lines)


def main() -> None:
    from tests.benchmarks.embed import cpu_line

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", default=SHAPES, help="batches as ROWSxSEQ, comma-separated")
    ap.add_argument("--dtypes", default="bfloat16,float32")
    ap.add_argument("--repeats", type=int, default=3, help="rounds, each method in a fresh process")
    ap.add_argument("--iters", type=int, default=9, help="forwards a round times (its median counts)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, _shapes(args.shapes), args.iters)))
        return
    result = measure(_shapes(args.shapes), args.dtypes.split(","), args.repeats, args.iters)
    print(render(result, cpu_line()))


if __name__ == "__main__":
    main()
