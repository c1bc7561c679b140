"""Where the encoder's time goes: a JAX profiler trace of real batches, mapped to the model.

    python -m tests.benchmarks.profile_encoder [--rows 32] [--seq 256] [--attention native]
                                               [--dtype bfloat16]

Each XLA op in the trace is attributed by the named scope of the HLO it came from
(`attention_<kernel>`, `pooling`, embeddings) and by whether its fused computation holds a
matrix multiply. Percentages are of the time the XLA threads were busy. Parameters are cast as the runtime
casts them (matrices to --dtype, layer-norm vectors stay float32).
"""

import argparse
import collections
import glob
import re
import tempfile

import jax
import jax.numpy as jnp
import numpy as np

from docbeam.kernels import api as kernels
from docbeam.model import embed_segments, load_checkpoint

INSTR = re.compile(r"^\s*(?:ROOT )?%(\S+) = .*?(?:calls=%(\S+?)[,}\s].*?)?op_name=\"([^\"]+)\"")


def _categories(hlo: str) -> dict[str, str]:
    """HLO instruction name -> category, from the optimised module text."""
    computations, current = {}, None
    for line in hlo.splitlines():
        head = re.match(r"^(?:ENTRY )?%(\S+) ", line)
        if head and line.rstrip().endswith("{"):
            current = head.group(1)
            computations[current] = []
        elif current:
            computations[current].append(line)
    has_dot = {name: any(" dot(" in ln or "convolution(" in ln for ln in body) for name, body in computations.items()}
    out = {}
    for line in hlo.splitlines():
        m = INSTR.match(line)
        if not m:
            continue
        name, called, op = m.groups()
        dot = " dot(" in line or (called is not None and has_dot.get(called, False))
        if "attention_" in op:
            out[name] = "attention (scores, softmax, weighted sum)"
        elif "pooling" in op:
            out[name] = "pooling + normalise"
        elif dot:
            out[name] = "dense matmuls (QKV, output, FFN) + fused epilogues"
        elif "layer_" in op:
            out[name] = "layer norm, GELU, residual adds"
        else:
            out[name] = "embeddings + other"
    return out


def breakdown(
    rows: int = 32, seq: int = 256, attention: str = "auto", batches: int = 3, dtype: str = "float32"
) -> dict[str, float]:
    ckpt, params = load_checkpoint()
    params = jax.tree.map(lambda a: jnp.asarray(a, jnp.float32 if a.ndim == 1 else dtype), params)
    shape = (rows, seq, ckpt.config.heads, ckpt.config.head_dim)
    attend = kernels.get(attention, shape=shape, dtype=dtype).attend
    fn = jax.jit(lambda p, t, s, q: embed_segments(p, ckpt.config, t, s, q, attend=attend, max_segments=64))
    rng = np.random.default_rng(0)
    tokens = rng.integers(1000, 20000, (rows, seq)).astype(np.int32)
    seg = np.repeat(np.arange(1, 5), seq // 4)[None].repeat(rows, 0).astype(np.int32)  # 4 segments a row
    pos = (np.arange(seq) % (seq // 4))[None].repeat(rows, 0).astype(np.int32)
    compiled = fn.lower(params, tokens, seg, pos).compile()
    cats = _categories(compiled.as_text())
    compiled(params, tokens, seg, pos).block_until_ready()
    with tempfile.TemporaryDirectory() as d:
        jax.profiler.start_trace(d)
        for _ in range(batches):
            compiled(params, tokens, seg, pos).block_until_ready()
        jax.profiler.stop_trace()
        data = jax.profiler.ProfileData.from_file(glob.glob(f"{d}/**/*.xplane.pb", recursive=True)[0])
    busy = collections.Counter()
    for plane in data.planes:
        for line in plane.lines:
            for ev in line.events:
                if ev.name in cats:
                    busy[cats[ev.name]] += ev.duration_ns
    total = sum(busy.values()) or 1
    return {k: v / total for k, v in busy.most_common()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=32)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--attention", default="auto")
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    args = ap.parse_args()
    for name, share in breakdown(args.rows, args.seq, args.attention, dtype=args.dtype).items():
        print(f"{share:6.1%}  {name}")


if __name__ == "__main__":
    main()
