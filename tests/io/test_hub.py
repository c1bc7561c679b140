"""`--model ORG/NAME[@REVISION]` offline, against a cache laid out the way huggingface_hub
lays it out (models--ORG--NAME/blobs, refs/main, snapshots/<commit>/ -> ../../blobs), and
staged to GCS for remote workers (the emulator)."""

import hashlib
import os
from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.model.checkpoint import sha256_of
from docbeam.model.errors import CheckpointError
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.io import checkpoints, hub
from docbeam.pipeline.launch.planner import make_plan, stage_for_workers
from tests.helpers import SAMPLES
from tests.model.tiny import write_tiny_bert

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def lay_out_cache(cache: Path, repo_id: str, files: Path, commit: str = COMMIT) -> Path:
    """What `hf download` leaves: content-addressed blobs, a ref, a snapshot of symlinks."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    for f in sorted(p for p in files.rglob("*") if p.is_file()):
        data = f.read_bytes()
        blob = repo / "blobs" / hashlib.sha256(data).hexdigest()  # LFS blobs are named by sha256
        blob.parent.mkdir(exist_ok=True)
        blob.write_bytes(data)
        link = repo / "snapshots" / commit / f.relative_to(files)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(blob, link.parent))
    return repo / "snapshots" / commit


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    from huggingface_hub import constants

    cache = tmp_path / "hf"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)  # nothing here may touch the network
    lay_out_cache(cache, "acme/tiny-bert", write_tiny_bert(tmp_path / "files", pooling={"pooling_mode": "cls"}))
    return cache


def test_hub_ids_are_told_from_paths(tmp_path):
    assert hub.is_hub_id("BAAI/bge-small-en-v1.5") and hub.is_hub_id("intfloat/multilingual-e5-small@main")
    assert not hub.is_hub_id("gs://b/models/x") and not hub.is_hub_id("just-a-name")
    (tmp_path / "org" / "name").mkdir(parents=True)
    assert not hub.is_hub_id(str(tmp_path / "org" / "name"))


def test_resolved_from_the_cache_to_a_commit(hub_cache):
    got = hub.resolve("acme/tiny-bert")
    assert got.revision == COMMIT and got.name == f"acme/tiny-bert@{COMMIT}"
    assert (got.path / "model.safetensors").read_bytes()  # through the symlink into blobs/
    assert hub.resolve(f"acme/tiny-bert@{COMMIT}").path == got.path


def test_not_cached_and_offline_is_one_clear_line(hub_cache):
    with pytest.raises(CheckpointError, match=r"--model acme/absent: not in the Hugging Face cache .* HF_HUB_OFFLINE"):
        hub.resolve("acme/absent")


def test_pickle_only_repo_is_refused(tmp_path, hub_cache):
    files = write_tiny_bert(tmp_path / "pickled")
    (files / "model.safetensors").unlink()
    (files / "pytorch_model.bin").write_bytes(b"never unpickled")
    lay_out_cache(hub_cache, "acme/pickled", files)
    with pytest.raises(CheckpointError, match="no model.safetensors .*never pickled weights"):
        hub.resolve("acme/pickled")


def test_plan_pins_name_revision_and_sha256(hub_cache):
    plan = make_plan(
        PipelineOptions(["--input", str(SAMPLES / "notes.txt"), "--model", "acme/tiny-bert"]), needs_output=False
    )
    snapshot = hub.resolve("acme/tiny-bert").path
    assert plan.model_name == f"acme/tiny-bert@{COMMIT}" and plan.model_path == str(snapshot)
    assert plan.weights_sha256 == sha256_of(snapshot / "model.safetensors")
    assert plan.config.head.pooling == ("cls",)


def test_a_model_missing_offline_fails_at_launch(hub_cache):
    with pytest.raises(UsageError, match="--model: --model acme/absent: not in the Hugging Face cache"):
        make_plan(
            PipelineOptions(["--input", str(SAMPLES / "notes.txt"), "--model", "acme/absent"]), needs_output=False
        )


def test_staged_for_remote_workers_once_and_pinned(hub_cache, gcs_emulator, tmp_path):
    temp = f"gs://{gcs_emulator.create_bucket()}/tmp"
    argv = ["--input", str(SAMPLES / "notes.txt"), "--model", "acme/tiny-bert", f"--temp_location={temp}"]
    options = PipelineOptions(argv)
    plan = stage_for_workers(make_plan(options, needs_output=False), options)
    assert plan.model_path == f"{temp}/docbeam-models/{plan.weights_sha256}" == plan.encoder.model
    assert plan.encoder.model_sha256 == plan.weights_sha256
    # A worker: downloads the staged copy, checks the hash; the same checkpoint comes out.
    local = checkpoints.localize_checkpoint(plan.model_path, tmp_path / "worker", plan.weights_sha256)
    assert sorted(p.name for p in local.glob("*_Pooling/*")) == ["config.json"]
    assert sha256_of(local / "model.safetensors") == plan.weights_sha256
    again = stage_for_workers(make_plan(options, needs_output=False), options)  # already there: no upload
    assert again.model_path == plan.model_path
