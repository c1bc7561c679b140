"""A real `gcp-storage-emulator` process for tests.

The emulator runs as a subprocess (not in-thread) so Beam worker subprocesses and the
code under test reach it over real HTTP, exactly as they would reach GCS.
"""

from __future__ import annotations

import contextlib
import itertools
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from docbeam.pipeline.io.storage import emulator_env

_bucket_names = itertools.count()


def free_port() -> int:
    """A port that was free a moment ago (the caller retries if it loses the race)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_answers(endpoint: str, proc: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gcp-storage-emulator exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(endpoint + "/", timeout=1) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"gcp-storage-emulator did not answer on {endpoint} in {timeout_s}s")


@dataclass
class GcsEmulator:
    """A running emulator. `endpoint` is what STORAGE_EMULATOR_HOST must hold."""

    endpoint: str
    process: subprocess.Popen
    _client: storage.Client | None = field(default=None, repr=False)

    def client(self) -> storage.Client:
        """A client bound to this emulator whatever STORAGE_EMULATOR_HOST says.

        Test set-up goes through it so that it bypasses any fault-injecting proxy.
        """
        if self._client is None:
            self._client = storage.Client(
                project="test",
                credentials=AnonymousCredentials(),
                client_options={"api_endpoint": self.endpoint},
            )
        return self._client

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        """Environment that points google-cloud-storage and Beam at `endpoint`."""
        return emulator_env(endpoint or self.endpoint)

    def create_bucket(self, name: str | None = None) -> str:
        """Create a bucket (a fresh unique one when `name` is None); returns its name.

        Tests that inject faults pass a fixed name: the proxy's fault pattern depends on
        request paths, so a fixed name makes it the same on every run.
        """
        name = name or f"test-{next(_bucket_names)}"
        self.client().create_bucket(name)
        return name

    def upload_bytes(self, url: str, data: bytes) -> None:
        bucket, name = _split(url)
        self.client().bucket(bucket).blob(name).upload_from_string(data)

    def upload_file(self, local: str | Path, url: str) -> None:
        bucket, name = _split(url)
        self.client().bucket(bucket).blob(name).upload_from_filename(str(local))

    def upload_dir(self, local_dir: str | Path, url_prefix: str) -> list[str]:
        """Upload every file under `local_dir` to `url_prefix/<relative path>`."""
        local_dir = Path(local_dir)
        urls = []
        for path in sorted(p for p in local_dir.rglob("*") if p.is_file()):
            url = url_prefix.rstrip("/") + "/" + path.relative_to(local_dir).as_posix()
            self.upload_file(path, url)
            urls.append(url)
        return urls

    def download_bytes(self, url: str) -> bytes:
        bucket, name = _split(url)
        return self.client().bucket(bucket).blob(name).download_as_bytes()

    def list(self, url_prefix: str) -> list[str]:
        bucket, prefix = _split(url_prefix)
        blobs = self.client().list_blobs(bucket, prefix=prefix)
        return sorted(f"gs://{bucket}/{b.name}" for b in blobs)

    def wipe(self) -> None:
        """Drop every bucket and object (the emulator's own /wipe endpoint)."""
        urllib.request.urlopen(self.endpoint + "/wipe", timeout=10).read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _split(url: str) -> tuple[str, str]:
    if not url.startswith("gs://"):
        raise ValueError(f"not a gs:// URL: {url!r}")
    bucket, _, name = url[len("gs://") :].partition("/")
    return bucket, name


@contextlib.contextmanager
def run_gcs_emulator(startup_timeout_s: float = 20.0) -> Iterator[GcsEmulator]:
    """Start an in-memory emulator on 127.0.0.1 and a free port; stop it on exit.

    Does not touch os.environ: callers (the pytest fixtures) decide where the
    environment points.
    """
    for attempt in range(3):
        port = free_port()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gcp_storage_emulator",
                "start",
                "--host=127.0.0.1",
                f"--port={port}",
                "--in-memory",
                "--quiet",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        emulator = GcsEmulator(endpoint=f"http://127.0.0.1:{port}", process=proc)
        try:
            _wait_until_answers(emulator.endpoint, proc, startup_timeout_s)
            break
        except RuntimeError:
            # Most likely the port was taken between free_port() and bind: try another.
            emulator.stop()
            if attempt == 2:
                raise
    try:
        yield emulator
    finally:
        emulator.stop()
