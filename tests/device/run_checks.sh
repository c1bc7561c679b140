#!/usr/bin/env bash
# GPU checks in one call, for a session that is lent a GPU machine (the `device` tool):
# the kernel conformance suite (Pallas kernels compiled, not interpreted) and the kernel
# bench on the GPU, against the JAX installed there; results under $OUT.
#
# The GPU machine reaches no network and has no apache-beam: only kernels/ (and what
# `docbeam kernels` needs) run there, from the working tree, under the installed name
# docbeam.kernels (a folder of links stands in for the install). Missing wheels can be
# carried as the device tool's README says (.whl/, cp312 manylinux), e.g.:
#   run(command="bash tests/device/run_checks.sh", carry=[".whl"], timeout_s=540)
set -uo pipefail
OUT=${OUT:-/tmp/docbeam-device}
mkdir -p "$OUT"
NS=$(mktemp -d)
mkdir -p "$NS/docbeam"
for d in pipeline model kernels; do ln -s "$PWD/$d" "$NS/docbeam/$d"; done
export PYTHONPATH=$NS:$PWD
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PYTHONPATH
fi
export PYTHONUNBUFFERED=1
export JAX_PLATFORMS=${JAX_PLATFORMS:-cuda,cpu}  # tests/conftest.py defaults to cpu otherwise
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python3 -c "import jax; print(jax.__version__, jax.devices())" | tee "$OUT/jax.txt"
# Conformance first: it is the check that must not be cut off by the time limit (~9 min in all).
# --noconftest: the suite's conftest starts GCS and Beam fixtures this machine cannot import.
python3 -m pytest -q tests/kernels --noconftest -p no:cacheprovider --ignore=tests/kernels/test_multidevice.py 2>&1 | tail -30 | tee "$OUT/conformance.txt"
python3 -m docbeam.kernels.bench --seq 128,256,512,1024,2048,4096 --batch 8 --json "$OUT/bench_f32.json" | tee "$OUT/bench.txt"
python3 -m docbeam.kernels.bench --seq 128,256,512,1024,2048,4096 --batch 8 --dtype bfloat16 --json "$OUT/bench_bf16.json" \
  | tee -a "$OUT/bench.txt"
# ModernBERT-shaped layer at T=512..8192, global and local window 64 (flash skips key blocks
# outside the window when compiled): the long-T kernel table of docs/models.md, on the GPU.
python3 -m docbeam.kernels.bench --layer modernbert --json "$OUT/bench_modernbert.json" | tee -a "$OUT/bench.txt"
python3 -m docbeam.kernels.bench --layer modernbert --dtype bfloat16 --json "$OUT/bench_modernbert_bf16.json" \
  | tee -a "$OUT/bench.txt"
python3 -c "from docbeam.pipeline.cli import main; main(['kernels'])" \
  | tee "$OUT/kernels.txt"
python3 -c "from docbeam.pipeline.cli import main; main(['kernels', '--seq-len', '8192', '--window', '64'])" \
  | tee -a "$OUT/kernels.txt"
