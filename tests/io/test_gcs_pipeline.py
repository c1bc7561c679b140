"""The whole job against a real GCS emulator: gs:// in, gs:// out, flaky storage, a gs:// model."""

import json

import numpy as np
import pytest

from docbeam.model.checkpoint import default_checkpoint_dir, sha256_of
from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.io import outputs
from tests.helpers import SAMPLES, run_job

pytestmark = pytest.mark.slow


def _by_id(out: str) -> dict:
    return {d["doc_id"]: d for d in outputs.read_table(out, "documents").to_pylist()}


def _errors(out: str) -> list[str]:
    return sorted(json.dumps(e, sort_keys=True) for e in outputs.read_errors(out))


def test_gcs_in_and_out_matches_the_local_run(gcs_emulator, sample_run):
    local_out, _ = sample_run
    bucket = gcs_emulator.create_bucket()
    gcs_emulator.upload_dir(SAMPLES, f"gs://{bucket}/in")
    res = run_job(f"gs://{bucket}/in/*", f"gs://{bucket}/out")
    assert res.manifest["accounting"]["holds"] and res.manifest["counts"]["ok"] == 69
    listed = gcs_emulator.list(f"gs://{bucket}/out/")
    for must in ("_manifest.json", "_cost/report.json", "_cost/report.md", "_cost/stages.png"):
        assert f"gs://{bucket}/out/{must}" in listed
    assert not [p for p in listed if "beam-temp" in p]  # sinks finalised: temp files renamed away
    gcs, local = _by_id(f"gs://{bucket}/out"), _by_id(str(local_out))
    # ids derived from paths are relative to the glob's root: the same wherever the files live
    assert gcs.keys() == local.keys() and {"notes.txt", "guide.md", "page.html"} <= gcs.keys()
    for k in gcs:
        assert gcs[k]["n_tokens"] == local[k]["n_tokens"]
        assert np.allclose(gcs[k]["embedding"], local[k]["embedding"], atol=2e-6)


def test_flaky_storage_gives_identical_outputs(gcs_emulator, faulty_gcs):
    bucket = gcs_emulator.create_bucket("flaky-docbeam")
    gcs_emulator.upload_dir(SAMPLES, f"gs://{bucket}/in")
    clean = run_job(f"gs://{bucket}/in/*", f"gs://{bucket}/clean")
    faulty_gcs.configure(rate=0.08, seed=7)  # 503s, 429s, reset connections, slow answers
    flaky = run_job(f"gs://{bucket}/in/*", f"gs://{bucket}/flaky")
    assert faulty_gcs.faults() > 5, "the proxy must actually have failed requests"
    assert clean.manifest["accounting"] == flaky.manifest["accounting"]
    a, b = (outputs.read_table(f"gs://{bucket}/{o}", "documents").to_pylist() for o in ("clean", "flaky"))
    a, b = sorted(a, key=lambda d: d["doc_id"]), sorted(b, key=lambda d: d["doc_id"])
    for x, y in zip(a, b, strict=True):
        assert x["doc_id"] == y["doc_id"] and np.array_equal(x["embedding"], y["embedding"])
    assert _errors(f"gs://{bucket}/clean") == _errors(f"gs://{bucket}/flaky")


def test_model_checkpoint_from_gcs_is_verified(gcs_emulator, tmp_path):
    bucket = gcs_emulator.create_bucket()
    model_dir = default_checkpoint_dir()
    gcs_emulator.upload_dir(model_dir, f"gs://{bucket}/models/minilm")
    digest = sha256_of(model_dir / "model.safetensors")
    url = f"gs://{bucket}/models/minilm"
    res = run_job(SAMPLES / "notes.txt", tmp_path / "ok", "--model", url, "--model-sha256", digest)
    assert res.manifest["model"]["weights_sha256"] == digest and res.manifest["model"]["name"] == url
    with pytest.raises(UsageError, match="sha256") as err:
        run_job(SAMPLES / "notes.txt", tmp_path / "bad", "--model", url, "--model-sha256", "0" * 64)
    assert digest in str(err.value) and "0" * 64 in str(err.value)
