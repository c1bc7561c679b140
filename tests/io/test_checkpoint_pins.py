"""The launcher records every checkpoint file's sha256 (the run's manifest lists them) and every
load on a worker checks its files against that record: a tokenizer or Pooling module changed
between launch and the workers' load is refused, naming the file and both hashes."""

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from docbeam.model.checkpoint import default_checkpoint_dir, sha256_of
from docbeam.pipeline.io import checkpoints
from docbeam.pipeline.launch.running import job
from tests.helpers import SAMPLES, run_job


def _no_lowercase(raw: dict) -> dict:  # a tokenizer that still loads, but splits differently
    return {**raw, "normalizer": {**raw["normalizer"], "lowercase": False}}


def _cls_pooling(raw: dict) -> dict:  # a Pooling module that still loads, but pools differently
    return {**raw, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}


EDITS = {"tokenizer.json": _no_lowercase, "1_Pooling/config.json": _cls_pooling}


def _edited(file: Path, name: str) -> bytes:
    return json.dumps(EDITS[name](json.loads(file.read_text()))).encode()


def _change_after_planning(monkeypatch: pytest.MonkeyPatch, change) -> None:
    """Run `change()` once the launcher has planned the run, before any worker loads the model."""
    real = job.make_plan

    def plan_then_change(options):
        plan = real(options)
        change()
        return plan

    monkeypatch.setattr(job, "make_plan", plan_then_change)


def _local_copy(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    shutil.copytree(default_checkpoint_dir(), model)
    return model


def _assert_refused(err: pytest.ExceptionInfo, name: str, before: str, after: str) -> None:
    text = str(err.value)
    assert re.search(rf"{re.escape(name)} has sha256 {after}, the launcher recorded {before}", text), text


def test_unchanged_checkpoint_runs_and_the_manifest_lists_its_file_hashes(tmp_path):
    model = _local_copy(tmp_path)
    res = run_job(SAMPLES / "notes.txt", tmp_path / "out", "--model", str(model))
    assert res.manifest["counts"]["ok"] == 1
    expected = {
        n: sha256_of(model / n)
        for n in sorted(p.relative_to(model).as_posix() for p in model.rglob("*") if p.is_file())
        if checkpoints.wanted(n)
    }
    assert {"tokenizer.json", "config.json", "model.safetensors", "1_Pooling/config.json"} <= expected.keys()
    assert res.manifest["model"]["files_sha256"] == expected
    assert expected["model.safetensors"] == res.manifest["model"]["weights_sha256"]


@pytest.mark.parametrize("name", sorted(EDITS))
def test_local_checkpoint_changed_after_launch_is_refused(tmp_path, monkeypatch, name):
    model = _local_copy(tmp_path)
    before = sha256_of(model / name)
    edited = _edited(model / name, name)
    _change_after_planning(monkeypatch, lambda: (model / name).write_bytes(edited))
    with pytest.raises(Exception, match=re.escape(name)) as err:
        run_job(SAMPLES / "notes.txt", tmp_path / "out", "--model", str(model))
    _assert_refused(err, name, before, sha256_of(model / name))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(EDITS))
def test_gcs_checkpoint_changed_after_launch_is_refused_on_the_worker(gcs_emulator, tmp_path, monkeypatch, name):
    """The launcher and the workers each download the gs:// checkpoint into their cache: the
    object re-uploaded in between is a new generation, downloaded by the workers and refused."""
    bucket = gcs_emulator.create_bucket()
    url = f"gs://{bucket}/models/minilm"
    local = default_checkpoint_dir()
    gcs_emulator.upload_dir(local, url)
    edited = _edited(local / name, name)
    _change_after_planning(monkeypatch, lambda: gcs_emulator.upload_bytes(f"{url}/{name}", edited))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # a fresh checkpoint cache for this test
    weights = sha256_of(local / "model.safetensors")
    with pytest.raises(Exception, match=re.escape(name)) as err:
        run_job(SAMPLES / "notes.txt", tmp_path / "out", "--model", url, "--model-sha256", weights)
    _assert_refused(err, name, sha256_of(local / name), hashlib.sha256(edited).hexdigest())


def test_a_module_added_after_launch_is_refused(tmp_path):
    model = _local_copy(tmp_path)
    pins = checkpoints.checkpoint_files_sha256(model)
    assert checkpoints.checkpoint_dir(str(model), files_sha256=pins) == model
    (model / "2_Dense").mkdir()
    (model / "2_Dense" / "config.json").write_text("{}")
    with pytest.raises(checkpoints.ChecksumMismatchError, match=r"2_Dense/config.json has sha256 \w+, the launcher"):
        checkpoints.checkpoint_dir(str(model), files_sha256=pins)
    (model / "2_Dense" / "config.json").unlink()
    (model / "tokenizer.json").unlink()
    with pytest.raises(checkpoints.ChecksumMismatchError, match=r"tokenizer.json has sha256 \(missing\)"):
        checkpoints.checkpoint_dir(str(model), files_sha256=pins)


def test_a_file_rewritten_after_a_passing_check_is_caught_by_the_next_check(tmp_path):
    """Checks hash a file again only when it changed: a rewrite of the same size between two
    checks (a DoFn setup, then the next wave's) must still be caught."""
    model = _local_copy(tmp_path)
    pins = checkpoints.checkpoint_files_sha256(model)
    checkpoints.verify_checkpoint_files("m", model, pins)
    config = model / "config.json"
    text = config.read_text()
    config.write_text(text.replace('"gelu"', '"relu"'))  # the same length
    assert len(config.read_text()) == len(text) and config.read_text() != text
    with pytest.raises(checkpoints.ChecksumMismatchError, match="config.json has sha256"):
        checkpoints.verify_checkpoint_files("m", model, pins)
