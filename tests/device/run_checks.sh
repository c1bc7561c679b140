#!/usr/bin/env bash
# GPU checks in one call, for a session that is lent a GPU machine (the `device` tool):
# the kernel conformance suite and the kernel bench on the GPU, the encoder parity with
# the Pallas kernels compiled (not interpreted), results under $OUT.
#
# The GPU machine reaches no network. Carry wheels the way the device tool's README says
# (.whl/, built here with `pip download --only-binary=:all: --python-version 3.12 ...` for
# jax[cuda13]==0.10.2, its plugin, and docbeam's dependencies), then run e.g.:
#   run(command="bash tests/device/run_checks.sh", carry=[".whl"], timeout_s=540)
set -uo pipefail
OUT=${OUT:-/tmp/docbeam-device}
mkdir -p "$OUT"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
export JAX_PLATFORMS=${JAX_PLATFORMS:-cuda,cpu}  # tests/conftest.py defaults to cpu otherwise
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python3 -c "import jax; print(jax.__version__, jax.devices())" | tee "$OUT/jax.txt"
python3 -m docbeam.kernels.bench --seq 128,256,512,1024,2048,4096 --batch 8 --json "$OUT/bench_f32.json" | tee "$OUT/bench.txt"
python3 -m docbeam.kernels.bench --seq 128,256,512,1024,2048,4096 --batch 8 --dtype bfloat16 --json "$OUT/bench_bf16.json" \
  | tee -a "$OUT/bench.txt"
# ModernBERT-shaped layer at T=512..8192, global and local window 64 (flash skips key blocks
# outside the window when compiled): the long-T kernel table of docs/models.md, on the GPU.
python3 -m docbeam.kernels.bench --layer modernbert --json "$OUT/bench_modernbert.json" | tee -a "$OUT/bench.txt"
python3 -m docbeam.kernels.bench --layer modernbert --dtype bfloat16 --json "$OUT/bench_modernbert_bf16.json" \
  | tee -a "$OUT/bench.txt"
python3 -m pytest -q tests/kernels -p no:cacheprovider 2>&1 | tail -30 | tee "$OUT/conformance.txt"
python3 -c "from pipeline.cli import main; main(['kernels'])" \
  | tee "$OUT/kernels.txt"
python3 -c "from pipeline.cli import main; main(['kernels', '--seq-len', '8192', '--window', '64'])" \
  | tee -a "$OUT/kernels.txt"
