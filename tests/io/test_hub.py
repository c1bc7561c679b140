"""`--model ORG/NAME[@REVISION]` offline, against a cache laid out the way huggingface_hub
lays it out (models--ORG--NAME/blobs, refs/main, snapshots/<commit>/ -> ../../blobs), and
staged to GCS for remote workers (the emulator)."""

import hashlib
import http.server
import os
import subprocess
import sys
import threading
from importlib import metadata
from pathlib import Path

import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from docbeam.model.checkpoint import DEFAULT_MODEL_NAME, DEFAULT_PACKAGE, default_checkpoint_dir, sha256_of
from docbeam.model.errors import CheckpointError
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.io import checkpoints, hub
from docbeam.pipeline.launch.planning.planner import make_plan, stage_for_workers
from tests.helpers import SAMPLES, child_env
from tests.model.tiny import write_tiny_bert

DOCBEAM = str(Path(sys.executable).parent / "docbeam")
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
    with pytest.raises(UsageError, match="^--model acme/absent: not in the Hugging Face cache"):
        make_plan(
            PipelineOptions(["--input", str(SAMPLES / "notes.txt"), "--model", "acme/absent"]), needs_output=False
        )


def test_staged_for_remote_workers_once_and_pinned(hub_cache, gcs_emulator, tmp_path):
    temp = f"gs://{gcs_emulator.create_bucket()}/tmp"
    argv = ["--input", str(SAMPLES / "notes.txt"), "--model", "acme/tiny-bert", f"--temp_location={temp}"]
    options = PipelineOptions(argv)
    plan = stage_for_workers(make_plan(options, needs_output=False), options)
    key = checkpoints.staging_key(plan.encoder.files_sha256)
    assert plan.model_path == f"{temp}/docbeam-models/{key}" == plan.encoder.model
    assert plan.encoder.model_sha256 == plan.weights_sha256
    # A worker: downloads the staged copy, checks the hash; the same checkpoint comes out.
    local = checkpoints.localize_checkpoint(plan.model_path, tmp_path / "worker", plan.weights_sha256)
    assert sorted(p.name for p in local.glob("*_Pooling/*")) == ["config.json"]
    assert sha256_of(local / "model.safetensors") == plan.weights_sha256
    again = stage_for_workers(make_plan(options, needs_output=False), options)  # already there: no upload
    assert again.model_path == plan.model_path


def test_a_changed_tokenizer_beside_the_same_weights_is_staged_anew(hub_cache, gcs_emulator, tmp_path):
    """Workers check every file against the launcher's pins: a copy named by the weights alone
    would serve them the old tokenizer, and every worker would refuse it."""
    import shutil

    temp = f"gs://{gcs_emulator.create_bucket()}/tmp"
    argv = ["--input", str(SAMPLES / "notes.txt"), "--model", "acme/tiny-bert", f"--temp_location={temp}"]
    first = make_plan(PipelineOptions(argv), needs_output=False)
    local = tmp_path / "model"
    shutil.copytree(first.encoder.model, local)
    (local / "tokenizer_config.json").write_text('{"do_lower_case": false}')
    argv[argv.index("acme/tiny-bert")] = str(local)
    options = PipelineOptions(argv)
    plan = stage_for_workers(make_plan(options, needs_output=False), options)
    assert plan.weights_sha256 == first.weights_sha256
    assert plan.model_path != stage_for_workers(first, PipelineOptions(argv)).model_path
    worker = checkpoints.checkpoint_dir(plan.model_path, plan.weights_sha256, plan.encoder.files_sha256)
    assert (worker / "tokenizer_config.json").read_text() == '{"do_lower_case": false}'


# --- what the user sees when a hub model cannot be had (real CLI, real HTTP, no network) -----


class _NotFound(http.server.BaseHTTPRequestHandler):
    """A hub endpoint that knows no model: 404 with the hub's RepoNotFound error code."""

    def do_GET(self):
        self.send_response(404)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Error-Code", "RepoNotFound")
        self.end_headers()
        self.wfile.write(b'{"error": "Repository not found"}')

    do_HEAD = do_GET

    def log_message(self, *args):
        pass


@pytest.fixture
def hub_that_knows_nothing():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def docbeam_run(tmp_path, model: str, **env: str) -> subprocess.CompletedProcess:
    argv = [DOCBEAM, "run", "--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path / "out"), "--model", model]
    env = child_env(**{"HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "0", "JAX_PLATFORMS": "cpu", **env})
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


def test_an_unreachable_hub_is_told_from_a_missing_model(tmp_path, hub_that_knows_nothing):
    unreachable = docbeam_run(tmp_path, "BAAI/bge-small-en-v1.5", HF_ENDPOINT="http://127.0.0.1:9")
    assert unreachable.returncode == 2 and len(unreachable.stderr.strip().splitlines()) == 1, unreachable.stderr
    assert "cannot reach the Hugging Face hub (http://127.0.0.1:9) (ConnectError" in unreachable.stderr
    assert "`hf download BAAI/bge-small-en-v1.5`" in unreachable.stderr

    missing = docbeam_run(tmp_path, "acme/no-such-model", HF_ENDPOINT=hub_that_knows_nothing)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1, missing.stderr
    assert f"acme/no-such-model: no such model on the Hugging Face hub ({hub_that_knows_nothing})" in missing.stderr


def test_a_bare_model_name_gets_the_org_name_hint(tmp_path):
    out = docbeam_run(tmp_path, "all-MiniLM-L6-v2", HF_HUB_OFFLINE="1")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "all-MiniLM-L6-v2: not a directory" in out.stderr
    assert "a Hugging Face hub model is named ORG/NAME[@REVISION] (did you mean " + DEFAULT_MODEL_NAME in out.stderr
    other = docbeam_run(tmp_path, "my-model", HF_HUB_OFFLINE="1")
    assert "named ORG/NAME[@REVISION]" in other.stderr and "did you mean" not in other.stderr


def test_the_default_hub_id_is_the_installed_package_offline(hub_cache):
    """`docbeam models` prints the default's hub id: offline, with the package installed, it
    is the default, recorded as the package (version, file hashes), never a hub commit."""
    argv = ["--input", str(SAMPLES / "notes.txt"), "--model", DEFAULT_MODEL_NAME]
    plan = make_plan(PipelineOptions(argv), needs_output=False)  # hub_cache: offline, and no copy in the cache
    default = make_plan(PipelineOptions(argv[:2]), needs_output=False)
    assert plan.model_path is None and plan.model_name == DEFAULT_MODEL_NAME and "@" not in plan.model_name
    assert plan.settings["checkpoint"] == default.settings["checkpoint"]  # the same run as no --model at all
    source = plan.model_source
    assert source["package"] == DEFAULT_PACKAGE and source["version"] == metadata.version(DEFAULT_PACKAGE)
    assert source["files_sha256"]["model.safetensors"] == plan.weights_sha256
    assert source["files_sha256"]["tokenizer.json"] == sha256_of(default_checkpoint_dir() / "tokenizer.json")
    assert "revision" not in source and source == default.model_source
    # a revision is a hub commit: that still goes to the hub (here: offline, not cached)
    with pytest.raises(UsageError, match="not in the Hugging Face cache"):
        make_plan(PipelineOptions([*argv[:3], f"{DEFAULT_MODEL_NAME}@main"]), needs_output=False)
