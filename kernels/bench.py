"""Time every attention implementation that runs here, across sequence lengths.

    python -m docbeam.kernels.bench [--seq 128,256,512,1024,2048,4096] [--batch 4] [--heads 12] [--dim 32]
                            [--dtype float32] [--window W] [--emulated] [--json FILE]
    python -m docbeam.kernels.bench --layer modernbert     # T=512..8192, 12 heads x 64, global and window 64

`--layer modernbert` times a ModernBERT-base-shaped attention layer (12 heads of 64) at
T = 512..8192 with 8,192 tokens per call (batch = 8192 / T, the runtime's row budget), once
global and once with its local window (64 either side), with the kernel `auto` picks for
each. Dense kernels whose [B, H, T, T] float32 scores exceed --max-dense-gb are skipped
(at T=8192 one row is 3.2 GB per copy).

Each cell is the best of `--repeats` timed calls of a jitted attend (compile excluded), with
rows packed as two segments each. Kernels that only run emulated here (Pallas interpret
mode on CPU) are skipped unless --emulated, and even then only up to T=512: they exist to
check numbers, not to be timed.
"""

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

from docbeam.kernels import api as kernels
from docbeam.kernels import registry
from docbeam.kernels.spec import Status

DENSE = {"reference", "native", "xla_fused", "tokamax"}  # materialise [B, H, T, T] scores


def time_one(name: str, shape: tuple[int, int, int, int], dtype: str, repeats: int, window: int | None = None) -> float:
    batch, seq, heads, dim = shape
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal(shape), dtype) for _ in range(3))
    seg = jnp.asarray(np.repeat([1, 2], [seq // 2, seq - seq // 2])[None].repeat(batch, 0), jnp.int32)
    attend = kernels.get(name, shape=shape, dtype=dtype, window=window).attend
    fn = jax.jit(lambda a, b, c, s: attend(a, b, c, segment_ids=s, window=window))
    fn(q, k, v, seg).block_until_ready()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(q, k, v, seg).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m docbeam.kernels.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--seq", default="128,256,512,1024,2048,4096")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--window", type=int, default=None, help="local window (tokens either side)")
    ap.add_argument("--tokens", type=int, default=0, help="tokens per call: batch = tokens / T (overrides --batch)")
    ap.add_argument("--layer", choices=["modernbert"], help="preset: a ModernBERT-base attention layer, long T")
    ap.add_argument("--max-dense-gb", type=float, default=4.0, help="skip dense kernels whose scores exceed this")
    ap.add_argument("--only", help="comma list of kernels to time (default: every one that runs here)")
    ap.add_argument("--emulated", action="store_true", help="also time interpret-mode kernels (T <= 512)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if args.layer == "modernbert":
        args.seq, args.heads, args.dim, args.tokens = "512,1024,2048,4096,8192", 12, 64, 8192
    platform = kernels.platform_of_backend()
    seqs = [int(s) for s in args.seq.split(",")]
    windows = [None, 64] if args.layer else [args.window]
    report = {"platform": platform, "device": jax.devices()[0].device_kind, "args": vars(args), "tables": []}
    for window in windows:
        table = _table(args, platform, seqs, window)
        report["tables"].append(table)
        _print(args, platform, seqs, table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


def _batch(args, seq: int) -> int:
    return max(1, args.tokens // seq) if args.tokens else args.batch


def _table(args, platform: str, seqs: list[int], window: int | None) -> dict:
    results: dict[str, dict[int, float | None]] = {}
    for name in args.only.split(",") if args.only else kernels.names():
        avail = registry.availability(name, platform, dtype=args.dtype, window=window)
        emulated = avail.status is Status.EMULATED
        if not avail.usable or (emulated and not args.emulated):
            continue
        results[name] = {}
        for seq in seqs:
            shape = (_batch(args, seq), seq, args.heads, args.dim)
            dense_gb = shape[0] * args.heads * seq * seq * 4 / 1e9
            ok = registry.availability(name, platform, shape, args.dtype, window).usable and not (
                emulated and seq > 512
            )
            ok = ok and not (name in DENSE and dense_gb > args.max_dense_gb * (0.5 if name == "reference" else 1))
            results[name][seq] = time_one(name, shape, args.dtype, args.repeats, window) if ok else None
    auto = {
        s: kernels.get(
            "auto", platform=platform, shape=(_batch(args, s), s, args.heads, args.dim), dtype=args.dtype, window=window
        )
        for s in seqs
    }
    return {
        "window": window,
        "ms": {n: {s: (v * 1e3 if v else None) for s, v in r.items()} for n, r in results.items()},
        "auto": {s: {"name": c.name, "reason": c.reason} for s, c in auto.items()},
    }


def _print(args, platform: str, seqs: list[int], table: dict) -> None:
    window = table["window"]
    per = f"{args.tokens} tokens per call" if args.tokens else f"batch {args.batch}"
    what = "global" if window is None else f"local window {window}"
    print(
        f"\n{platform}, {jax.devices()[0].device_kind}, {per}, heads {args.heads}x{args.dim}, {args.dtype}, "
        f"{what}: milliseconds per call (best of {args.repeats}; - = skipped)"
    )
    print(f"{'kernel':<11}" + "".join(f"{'T=' + str(s):>11}" for s in seqs))
    for name, row in table["ms"].items():
        print(f"{name:<11}" + "".join(f"{row[s]:>11.2f}" if row[s] is not None else f"{'-':>11}" for s in seqs))
    print(f"{'auto':<11}" + "".join(f"{table['auto'][s]['name']:>11}" for s in seqs))


if __name__ == "__main__":
    main()
