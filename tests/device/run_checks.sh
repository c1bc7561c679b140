#!/usr/bin/env bash
# GPU checks in one call, for a session that is lent a GPU machine (the `device` tool),
# against the JAX installed there; results under $OUT. Steps, in this order (choose with
# DOCBEAM_DEVICE_STEPS="pipeline roofline conformance bench"):
#   pipeline     a whole `docbeam run` (Beam's DirectRunner) of 4,000 documents with 1, 8 and
#                every core's host processes, against EncoderRuntime.encode alone on the same
#                batches (tests/benchmarks/feed_gap.py): how much of the GPU a run keeps busy
#   roofline     measured encoder tokens/s beside the compiled roofline bound of the same
#                shapes (tests/benchmarks/bound_vs_measured.py), default model's shape
#   conformance  the kernel conformance suite (Pallas kernels compiled, not interpreted)
#   bench        the kernel bench tables of docs/models.md
#
# Before the call, here: the default model's small files (its weights are too large to carry;
# random ones of the same shapes are drawn there) and the wheels of what docbeam imports that
# the machine lacks (Beam and its dependencies, google-cloud-storage, the input formats' ...;
# ~56 MB of the 64 MiB a call carries):
#   python -m tests.benchmarks.bound_vs_measured --prepare .devmodel
#   bash tests/device/pipeline_wheels.sh
#   run(command="bash tests/device/run_checks.sh", carry=[".whl", ".devmodel"], timeout_s=540)
#
# The GPU machine reaches no network and has no apache-beam of its own. docbeam runs there from
# the working tree, under the installed name docbeam (a folder of links stands in for the
# install), against the machine's JAX, NumPy and pyarrow.
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
STEPS=${DOCBEAM_DEVICE_STEPS:-pipeline roofline conformance bench}
step() { [[ " $STEPS " == *" $1 "* ]]; }

if step pipeline && [[ -d .devmodel ]]; then
  if python3 -c "import apache_beam" 2>/dev/null; then
    python3 -m tests.benchmarks.feed_gap --model .devmodel --docs 4000 --processes "1,8,$(nproc)" \
      --json "$OUT/feed_gap.json" 2>&1 | grep -v "^WARNING\|^I0000\| INFO " | tee "$OUT/feed_gap.txt"
  else
    echo "pipeline: skipped, apache_beam does not import (bash tests/device/pipeline_wheels.sh, carry .whl)" \
      | tee "$OUT/feed_gap.txt"
  fi
fi

# The H200's dense peaks and HBM (141 GB = 131 GiB, 4.8 TB/s):
# https://www.nvidia.com/en-us/data-center/h200/ (a lent machine, not a catalogue worker).
if step roofline && [[ -d .devmodel ]]; then
  for dt in "bfloat16 989" "float32 67"; do
    set -- $dt
    python3 -m tests.benchmarks.bound_vs_measured --model .devmodel --dtype "$1" --peak-tflops "$2" \
      --hbm-gbps 4800 --hbm-gb 131 --seq 128,256,512 --json "$OUT/roofline_$1.json" 2>&1 | grep -v "^WARNING\|^I0000" \
      | tee -a "$OUT/roofline.txt"
  done
fi

# --noconftest: the suite's conftest starts GCS and Beam fixtures this machine cannot import.
step conformance && python3 -m pytest -q tests/kernels --noconftest -p no:cacheprovider --ignore=tests/kernels/test_multidevice.py 2>&1 | tail -30 | tee "$OUT/conformance.txt"
step bench || exit 0
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
