"""Time every attention implementation that runs here, across sequence lengths.

    python -m kernels.bench [--seq 128,256,512,1024,2048,4096] [--batch 4] [--heads 12] [--dim 32]
                            [--dtype float32] [--emulated] [--json FILE]

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

import kernels
from kernels import registry
from kernels.spec import Status


def time_one(name: str, shape: tuple[int, int, int, int], dtype: str, repeats: int) -> float:
    batch, seq, heads, dim = shape
    rng = np.random.default_rng(0)
    q, k, v = (jnp.asarray(rng.standard_normal(shape), dtype) for _ in range(3))
    seg = jnp.asarray(np.repeat([1, 2], [seq // 2, seq - seq // 2])[None].repeat(batch, 0), jnp.int32)
    attend = kernels.get(name, shape=shape, dtype=dtype).attend
    fn = jax.jit(lambda a, b, c, s: attend(a, b, c, segment_ids=s))
    fn(q, k, v, seg).block_until_ready()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(q, k, v, seg).block_until_ready()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seq", default="128,256,512,1024,2048,4096")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--emulated", action="store_true", help="also time interpret-mode kernels (T <= 512)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    platform = kernels.platform_of_backend()
    seqs = [int(s) for s in args.seq.split(",")]
    results: dict[str, dict[int, float | None]] = {}
    for name in kernels.names():
        avail = registry.availability(name, platform, dtype=args.dtype)
        emulated = avail.status is Status.EMULATED
        if not avail.usable or (emulated and not args.emulated):
            continue
        results[name] = {}
        for seq in seqs:
            shape = (args.batch, seq, args.heads, args.dim)
            ok = registry.availability(name, platform, shape, args.dtype).usable and not (emulated and seq > 512)
            results[name][seq] = time_one(name, shape, args.dtype, args.repeats) if ok else None
    print(
        f"{platform}, {jax.devices()[0].device_kind}, batch {args.batch}, heads {args.heads}x{args.dim}, "
        f"{args.dtype}: milliseconds per call (best of {args.repeats})"
    )
    print(f"{'kernel':<11}" + "".join(f"{'T=' + str(s):>11}" for s in seqs))
    for name, row in results.items():
        print(f"{name:<11}" + "".join(f"{row[s] * 1e3:>11.2f}" if row[s] is not None else f"{'-':>11}" for s in seqs))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "platform": platform,
                    "device": jax.devices()[0].device_kind,
                    "args": vars(args),
                    "ms": {n: {s: (v * 1e3 if v else None) for s, v in r.items()} for n, r in results.items()},
                },
                f,
                indent=2,
            )


if __name__ == "__main__":
    main()
