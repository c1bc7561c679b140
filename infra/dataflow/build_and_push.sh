#!/usr/bin/env bash
# Build docbeam's Dataflow worker image(s) and push them to Artifact Registry; optionally
# register a Flex Template that launches the job from the same image.
#
#   infra/dataflow/build_and_push.sh --project PROJECT [--region us-central1] [--repo docbeam]
#       [--tag TAG] [--target tpu|gpu|all] [--template-bucket BUCKET] [--dry-run]
#
# Image: REGION-docker.pkg.dev/PROJECT/REPO/docbeam-worker-TARGET:TAG
# --dry-run prints the commands and runs nothing (no docker or gcloud needed).
# Needs: docker with BuildKit (it reads Dockerfile.<target>.dockerignore), gcloud, and an
# existing Docker repository in Artifact Registry:
#   gcloud artifacts repositories create REPO --repository-format=docker --location=REGION
set -euo pipefail

usage() {
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  exit "${1:-0}"
}

project=""
region="us-central1"
repo="docbeam"
tag=""
target="tpu"
template_bucket=""
dry_run=false

while (($#)); do
  case "$1" in
    --project) project="${2:?--project needs a value}"; shift 2 ;;
    --region) region="${2:?--region needs a value}"; shift 2 ;;
    --repo) repo="${2:?--repo needs a value}"; shift 2 ;;
    --tag) tag="${2:?--tag needs a value}"; shift 2 ;;
    --target) target="${2:?--target needs a value}"; shift 2 ;;
    --template-bucket) template_bucket="${2:?--template-bucket needs a value}"; shift 2 ;;
    --dry-run) dry_run=true; shift ;;
    -h | --help) usage 0 ;;
    *) echo "build_and_push.sh: unknown argument: $1" >&2; usage 2 ;;
  esac
done

# The build context is the repository root, wherever this is called from.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

if [[ -z "$project" ]]; then
  echo "build_and_push.sh: --project is required" >&2
  exit 2
fi
case "$target" in
  tpu) targets=(tpu) ;;
  gpu) targets=(gpu) ;;
  all) targets=(tpu gpu) ;;
  *) echo "build_and_push.sh: --target must be tpu, gpu or all, not '$target'" >&2; exit 2 ;;
esac
if [[ -z "$tag" ]]; then
  # The commit, so a job's image names the code it runs; "dev" outside a git checkout.
  tag="$(git rev-parse --short=12 HEAD 2>/dev/null || echo dev)"
fi
if [[ ! "$tag" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
  echo "build_and_push.sh: '$tag' is not a valid image tag" >&2
  exit 2
fi
if [[ ! -f README.md ]] && ! $dry_run; then
  echo "build_and_push.sh: README.md is missing (pyproject.toml names it; pip install . needs it)" >&2
  exit 2
fi

registry="${region}-docker.pkg.dev"

# Print a command, shell-quoted; run it unless --dry-run.
run() {
  printf '+'
  printf ' %q' "$@"
  printf '\n'
  if ! $dry_run; then
    "$@"
  fi
}

run gcloud auth configure-docker "$registry" --quiet
for t in "${targets[@]}"; do
  image="${registry}/${project}/${repo}/docbeam-worker-${t}:${tag}"
  # Dataflow's TPU and GPU hosts are x86_64, whatever machine builds the image.
  run env DOCKER_BUILDKIT=1 docker build --platform linux/amd64 \
    -f "infra/dataflow/Dockerfile.${t}" -t "$image" .
  run docker push "$image"
  if [[ -n "$template_bucket" ]]; then
    run gcloud dataflow flex-template build "gs://${template_bucket}/templates/docbeam-${t}.json" \
      --project "$project" --image "$image" --sdk-language PYTHON \
      --metadata-file infra/dataflow/flex_template.json
  fi
  echo "image: $image"
done
