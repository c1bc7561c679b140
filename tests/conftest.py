"""Shared pytest fixtures."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # CI has no accelerator; never probe for one
# Subprocesses started from the repository root must not find its folders as top-level packages:
# docbeam is imported as docbeam.*, and a bare `pipeline.x` that works only from the root is a bug.
os.environ.setdefault("PYTHONSAFEPATH", "1")
# --dtype auto goes by the CPU's bfloat16 instructions: pinned to an AVX2 CPU, so runs are float32
# and their parity checks hold on whatever machine runs the suite.
os.environ["DOCBEAM_CPU_FLAGS"] = "avx avx2 fma"
# A local CPU is split into XLA devices by its cores (encode.cpu_devices): pinned to two, the
# split this suite's CI machine makes, and made before any test starts JAX, so every test
# process encodes on the same devices whatever ran in it first.
os.environ["DOCBEAM_CPU_DEVICES"] = "2"
# Compiled encoders shared by every test process of a session (and the next session here),
# not written to the user's own ~/.cache.
os.environ.setdefault("DOCBEAM_COMPILE_CACHE", os.path.join(tempfile.gettempdir(), "docbeam-test-xla"))

import pytest

from docbeam.pipeline.encode import cpu_devices
from tests.helpers import SAMPLES, run_job

cpu_devices.split()


@pytest.fixture(scope="session")
def sample_run(tmp_path_factory):
    """The bundled sample job, run once per session; (output dir, RunResult)."""
    out = tmp_path_factory.mktemp("sample")
    return out, run_job(SAMPLES / "*", out)


# ======================================================================================
# GCS: a real emulator process, and a fault-injecting proxy in front of it.
# ======================================================================================
from docbeam.pipeline.io import storage
from tests.support.faulty_proxy import FaultyProxy
from tests.support.gcs_emulator import GcsEmulator, run_gcs_emulator


@pytest.fixture(scope="session")
def gcs_emulator() -> Iterator[GcsEmulator]:
    """An in-memory gcp-storage-emulator for the whole session.

    From the first test that asks for it until the session ends, os.environ holds
    `storage.emulator_env(endpoint)`: STORAGE_EMULATOR_HOST plus the offline
    credentials that spare Beam its ~25 s credential lookup per process. Subprocesses
    (Beam workers, CLI runs) inherit it. Buckets persist across tests: create a fresh
    one per test with `gcs_emulator.create_bucket()`.
    """
    with run_gcs_emulator() as emulator, pytest.MonkeyPatch.context() as mp:
        for name, value in emulator.env().items():
            mp.setenv(name, value)
        yield emulator


@pytest.fixture
def faulty_gcs(gcs_emulator: GcsEmulator, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultyProxy]:
    """A FaultyProxy in front of the emulator, with STORAGE_EMULATOR_HOST pointing at it.

    It starts transparent (rate 0); call `faulty_gcs.configure(rate=..., ...)`.
    `gcs_emulator.client()` still talks to the emulator directly, for set-up and checks.
    storage's retry waits are shortened for the test so retries cost milliseconds.
    """
    with FaultyProxy(gcs_emulator.endpoint) as proxy:
        monkeypatch.setenv(storage.EMULATOR_HOST_ENV, proxy.endpoint)
        previous = storage.configure_retries(storage.RetryPolicy(max_attempts=6, initial_wait_s=0.01, max_wait_s=0.2))
        try:
            yield proxy
        finally:
            storage.configure_retries(previous)


# ======================================================================================
# (end of GCS fixtures)
# ======================================================================================
