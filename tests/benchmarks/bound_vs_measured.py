"""Measured encoder throughput beside the compiled roofline bound, on this machine's accelerator.

    python -m tests.benchmarks.bound_vs_measured --prepare DIR          # here: the model's small files
    python -m tests.benchmarks.bound_vs_measured --model DIR --peak-tflops 989 --hbm-gbps 4800

`docbeam compile` gives a TPU worker's bound from XLA's cost analysis; nothing measures it
without a TPU. On a lent GPU the same analysis (`encode.aot.measure_here`: the runtime's own
compile, the same cost accounting) runs beside a measurement of the same shapes, which says how
far a compiled bound sits from a real run on one platform. The chip's peak FLOP/s and HBM
bandwidth are passed in (tests/device/run_checks.sh names the H200's and their source): a
lent machine is not a Dataflow worker in the hardware catalogue.

The lent machine cannot fetch the default model and its weights are too large to carry, so
`--prepare DIR` copies the default model's small files (config, tokenizer, pooling) and the
names and shapes of its weights; `--model DIR` on such a folder draws random weights of those
shapes (throughput does not depend on their values). Needs no Beam.
"""

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

SHAPES = "weights_shapes.json"


def prepare(dest: Path, src: Path | None = None) -> None:
    """`src` (default: the default model) without its weights, and its weights' shapes."""
    from safetensors import safe_open

    from docbeam.model.checkpoint import default_checkpoint_dir

    src = src or default_checkpoint_dir()
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("model.safetensors", "*.md", "data_config.json"))
    with safe_open(src / "model.safetensors", "numpy") as f:
        shapes = {k: list(f.get_slice(k).get_shape()) for k in f.keys()}  # noqa: SIM118 (safe_open is no dict)
    (dest / SHAPES).write_text(json.dumps(shapes))


def with_random_weights(src: Path, dest: Path) -> Path:
    import numpy as np
    from safetensors.numpy import save_file

    shutil.copytree(src, dest)
    rng = np.random.default_rng(0)
    shapes = json.loads((src / SHAPES).read_text())
    save_file(
        {k: (rng.standard_normal(s) * 0.05).astype(np.float32) for k, s in shapes.items()}, dest / "model.safetensors"
    )
    return dest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.benchmarks.bound_vs_measured", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--prepare", type=Path, help="write the default model's small files and weight shapes here")
    parser.add_argument("--model", type=Path, help="a checkpoint, or a --prepare folder (random weights)")
    parser.add_argument("--peak-tflops", type=float, help="the chip's dense peak at --dtype")
    parser.add_argument("--hbm-gbps", type=float, help="the chip's HBM bandwidth, GB/s")
    parser.add_argument("--hbm-gb", type=float, default=0.0, help="the chip's HBM, GiB (for the fit column)")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float32"])
    parser.add_argument("--attention", default="auto")
    parser.add_argument("--seq", default="128,256,512", help="row lengths, each at the packer's full batch")
    parser.add_argument("--batches", type=int, default=16, help="batches per timing")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the rows here too")
    args = parser.parse_args(argv)
    if args.prepare:
        prepare(args.prepare)
        print(f"wrote {args.prepare}")
        return 0
    if not (args.model and args.peak_tflops and args.hbm_gbps):
        parser.error("--model, --peak-tflops and --hbm-gbps are required (or --prepare DIR)")

    import jax

    from docbeam.model import flops_per_token
    from docbeam.model.checkpoint import read_config
    from docbeam.pipeline.encode import aot
    from docbeam.pipeline.encode.packing import PackSpec, default_rows
    from docbeam.pipeline.encode.runtime import EncoderSettings

    rates = aot.ChipRates(args.peak_tflops * 1e12, args.hbm_gbps * 1e9, args.hbm_gb * 2**30)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if (model / SHAPES).exists() and not (model / "model.safetensors").exists():
            model = with_random_weights(model, Path(tmp) / "model")
        rows = []
        for seq in map(int, args.seq.split(",")):
            pack = PackSpec(rows=default_rows(seq), seq_len=seq)
            settings = EncoderSettings(str(model), None, args.attention, args.dtype, pack)
            key = (pack.rows, seq, pack.segments_for(seq))
            rows += aot.measure_here(settings, rates, [key], batches=args.batches, repeats=args.repeats)
        cfg = read_config(model)
    device = jax.devices()[0]
    print(f"\n{device.platform} {device.device_kind}, jax {jax.__version__}, {args.dtype}, attention {args.attention}")
    print(f"bound: XLA cost analysis of the compiled encoder at {args.peak_tflops:g} TFLOP/s, {args.hbm_gbps:g} GB/s")
    print("model MFLOP/tok: the model's matmuls counted by hand (model.flops_per_token), to check XLA's count")
    print(
        f"{'batch':>11} {'kernel':<10} {'MFLOP/tok':>9} {'model':>6} {'KB/tok':>7} {'bound tok/s':>12} {'limit':<7} "
        f"{'measured tok/s':>14} {'spread':>19} {'of bound':>8}"
    )
    report = []
    for r, runs in rows:
        med = statistics.median(runs)
        spread = f"{min(runs):,.0f}-{max(runs):,.0f}"
        print(
            f"{f'[{r.rows}, {r.seq_len}]':>11} {r.kernels:<10} {r.flops_per_token / 1e6:>9.2f} "
            f"{flops_per_token(cfg, r.seq_len) / 1e6:>6.1f} "
            f"{r.bytes_per_token / 1e3:>7.1f} {r.bound_tokens_per_s:>12,.0f} {r.limit:<7} {med:>14,.0f} "
            f"{spread:>19} {med / r.bound_tokens_per_s:>8.1%}"
        )
        extra = dict(model_flops_per_token=flops_per_token(cfg, r.seq_len), measured_tokens_per_s=runs)
        report.append(dict(vars(r), **extra, device=device.device_kind))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
