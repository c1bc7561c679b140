"""Durable I/O outside Beam's sinks: single objects on local disk or `gs://`.

One job: read, write, list and delete single objects with one retry policy for every
remote call (checkpoints.py brings model checkpoints onto a worker on top of it).

- Retries: `tenacity`, exponential backoff with jitter, bounded attempts, only on
  throttling (429), server errors (500/502/503/504) and dropped connections or
  timeouts; never on other 4xx (NotFound, Forbidden, ...). The google-cloud-storage
  client's own retry is switched off (`retry=None`) on every call, so this is the only
  retry layer and every retry is counted: `retry_count()`, plus `add_retry_hook()`
  for callers that also keep a Beam metric.
- Local writes are atomic (temp file in the same directory, fsync, `os.replace`);
  GCS object writes are atomic by nature.
- Emulator support (`STORAGE_EMULATOR_HOST`): see `ensure_emulator_credentials`.

No apache_beam import here: Beam's gcsio is not needed for single objects, and keeping
this module Beam-free keeps it usable from any layer.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, TypeVar

import requests
import tenacity
import urllib3
from google.api_core import exceptions as api_exceptions
from google.auth import exceptions as auth_exceptions
from google.cloud import storage
from google.cloud.storage import exceptions as storage_exceptions

_LOG = logging.getLogger(__name__)

T = TypeVar("T")
PathLike = str | os.PathLike

GS_PREFIX = "gs://"
EMULATOR_HOST_ENV = "STORAGE_EMULATOR_HOST"

# (connect, read) seconds for every GCS call: a stuck connection becomes a retryable
# timeout instead of hanging a worker.
GCS_TIMEOUT = (10.0, 120.0)

# ---------------------------------------------------------------------------------------
# Retry policy
# ---------------------------------------------------------------------------------------

# Transient by nature: the same request can succeed a moment later. 501
# (MethodNotImplemented) is a 5xx but permanent, so the 5xx classes are listed one by
# one instead of ServerError.
RETRYABLE_ERRORS: tuple[type[BaseException], ...] = (
    api_exceptions.TooManyRequests,  # 429
    api_exceptions.InternalServerError,  # 500
    api_exceptions.BadGateway,  # 502
    api_exceptions.ServiceUnavailable,  # 503
    api_exceptions.GatewayTimeout,  # 504
    requests.exceptions.ConnectionError,  # includes reset / refused / aborted
    requests.exceptions.Timeout,
    requests.exceptions.ChunkedEncodingError,  # body cut off mid-transfer
    urllib3.exceptions.ProtocolError,
    auth_exceptions.TransportError,  # token refresh could not reach the server
    ConnectionError,  # builtin: ConnectionResetError, BrokenPipeError, ...
    TimeoutError,
    storage_exceptions.DataCorruption,  # checksum mismatch on a download: re-fetch
)


def is_retryable(exc: BaseException) -> bool:
    """True for errors worth another attempt (see RETRYABLE_ERRORS)."""
    return isinstance(exc, RETRYABLE_ERRORS)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounded exponential backoff: wait min(initial * 2**n + U(0, initial), max_wait)."""

    max_attempts: int = 6
    initial_wait_s: float = 0.5
    max_wait_s: float = 30.0


_policy = RetryPolicy()
_retry_lock = threading.Lock()
_retry_counts: dict[str, int] = {}
_retry_hooks: list[Callable[[str], None]] = []


def configure_retries(policy: RetryPolicy) -> RetryPolicy:
    """Set the process-wide policy; returns the previous one (tests shorten the waits)."""
    global _policy
    previous, _policy = _policy, policy
    return previous


def retry_policy() -> RetryPolicy:
    return _policy


def add_retry_hook(hook: Callable[[str], None]) -> None:
    """Call `hook(operation)` on every retry, e.g. to increment a Beam counter."""
    with _retry_lock:
        _retry_hooks.append(hook)


def remove_retry_hook(hook: Callable[[str], None]) -> None:
    with _retry_lock:
        if hook in _retry_hooks:
            _retry_hooks.remove(hook)


def retry_count(operation: str | None = None) -> int:
    """Retries made in this process so far, in total or for one operation name."""
    with _retry_lock:
        if operation is None:
            return sum(_retry_counts.values())
        return _retry_counts.get(operation, 0)


def reset_retry_count() -> None:
    with _retry_lock:
        _retry_counts.clear()


def _record_retry(operation: str, state: tenacity.RetryCallState) -> None:
    exc = state.outcome.exception() if state.outcome else None
    with _retry_lock:
        _retry_counts[operation] = _retry_counts.get(operation, 0) + 1
        hooks = list(_retry_hooks)
    _LOG.warning(
        "storage: retrying %s after attempt %d failed: %s: %s",
        operation,
        state.attempt_number,
        type(exc).__name__,
        exc,
    )
    for hook in hooks:
        try:
            hook(operation)
        except Exception:  # a metrics hook must never break the I/O it observes
            _LOG.exception("storage: retry hook %r failed", hook)


def retrying(operation: str, fn: Callable[[], T]) -> T:
    """Run `fn` under the retry policy; `operation` names it in counts and logs.

    After the last attempt the original exception is raised, not a tenacity wrapper.
    """
    policy = _policy
    retryer = tenacity.Retrying(
        retry=tenacity.retry_if_exception(is_retryable),
        stop=tenacity.stop_after_attempt(policy.max_attempts),
        wait=tenacity.wait_exponential_jitter(
            initial=policy.initial_wait_s,
            max=policy.max_wait_s,
            jitter=policy.initial_wait_s,
        ),
        before_sleep=lambda state: _record_retry(operation, state),
        reraise=True,
    )
    return retryer(fn)


# ---------------------------------------------------------------------------------------
# Paths and the GCS client
# ---------------------------------------------------------------------------------------


def is_gcs(path: PathLike) -> bool:
    return str(path).startswith(GS_PREFIX)


def split_gcs(url: str) -> tuple[str, str]:
    """'gs://bucket/a/b' -> ('bucket', 'a/b'); the object part may be empty."""
    if not is_gcs(url):
        raise ValueError(f"not a gs:// URL: {url!r}")
    bucket, _, name = url[len(GS_PREFIX) :].partition("/")
    if not bucket:
        raise ValueError(f"no bucket in {url!r}")
    return bucket, name


_client_lock = threading.Lock()
_client_key: tuple[int, str | None] | None = None
_client: storage.Client | None = None


def gcs_client() -> storage.Client:
    """The process's google-cloud-storage client.

    Rebuilt after a fork (a requests session must not be shared across processes) and
    when STORAGE_EMULATOR_HOST changes (tests move between emulator and proxy). With the
    emulator set, the client uses anonymous credentials by itself.
    """
    global _client, _client_key
    key = (os.getpid(), os.environ.get(EMULATOR_HOST_ENV))
    with _client_lock:
        if _client is None or _client_key != key:
            _client = storage.Client()
            _client_key = key
        return _client


def gcs_blob(url: str, generation: int | None = None) -> storage.Blob:
    bucket, name = split_gcs(url)
    if not name:
        raise ValueError(f"no object name in {url!r}")
    return gcs_client().bucket(bucket).blob(name, generation=generation)


# ---------------------------------------------------------------------------------------
# Single-object I/O
# ---------------------------------------------------------------------------------------


def read_bytes(path: PathLike) -> bytes:
    if is_gcs(path):
        blob = gcs_blob(str(path))
        return retrying("read", lambda: blob.download_as_bytes(retry=None, timeout=GCS_TIMEOUT))
    return Path(path).read_bytes()


def open_read(path: PathLike, buffer_bytes: int = 4 << 20) -> BinaryIO:
    """A seekable binary reader of one file or object that reads only the ranges asked for
    (Parquet readers seek to the footer, then to the row groups they need): a large object is
    never downloaded whole. A gs:// object is pinned to its generation when opened, and every
    range read goes through the retry policy."""
    if not is_gcs(path):
        return open(path, "rb")  # noqa: SIM115 -- the caller closes it
    blob = gcs_blob(str(path))
    retrying("stat", lambda: blob.reload(retry=None, timeout=GCS_TIMEOUT))
    pinned = gcs_blob(str(path), generation=blob.generation)
    return io.BufferedReader(_GcsRanges(pinned, blob.size or 0), buffer_size=buffer_bytes)


class _GcsRanges(io.RawIOBase):
    """The raw, seekable side of `open_read` for one gs:// object: one ranged GET per read."""

    def __init__(self, blob: storage.Blob, size: int):
        self._blob, self._size, self._pos = blob, size, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self._size - self._pos)
        if n <= 0:
            return 0
        start, end = self._pos, self._pos + n - 1  # `end` is inclusive
        data = retrying(
            "read_range",
            lambda: self._blob.download_as_bytes(start=start, end=end, retry=None, timeout=GCS_TIMEOUT),
        )
        buffer[: len(data)] = data
        self._pos += len(data)
        return len(data)


def read_text(path: PathLike, encoding: str = "utf-8") -> str:
    return read_bytes(path).decode(encoding)


def write_bytes(path: PathLike, data: bytes, content_type: str | None = None) -> None:
    """Write the whole object; readers see the old content or the new, never a part."""
    if is_gcs(path):
        blob = gcs_blob(str(path))
        ctype = content_type or "application/octet-stream"
        retrying(
            "write",
            lambda: blob.upload_from_string(data, content_type=ctype, retry=None, timeout=GCS_TIMEOUT),
        )
        return
    atomic_write_local(Path(path), data)


def write_text(path: PathLike, text: str, encoding: str = "utf-8") -> None:
    write_bytes(path, text.encode(encoding), content_type=f"text/plain; charset={encoding}")


def exists(path: PathLike) -> bool:
    if is_gcs(path):
        blob = gcs_blob(str(path))
        return retrying("exists", lambda: blob.exists(retry=None, timeout=GCS_TIMEOUT))
    return os.path.exists(path)


def list_prefix(prefix: PathLike) -> list[str]:
    """Sorted paths of all files/objects whose full path starts with `prefix`.

    GCS semantics on both sides: 'dir/' lists everything below dir, 'dir/part-' lists
    dir's entries starting with 'part-' (recursively), directories are not listed. One
    local exception: a prefix naming an existing directory lists only that directory
    (not siblings like 'dir2/'), so that '/tmp/out' does not walk all of /tmp.
    """
    if is_gcs(prefix):
        bucket, name = split_gcs(str(prefix))

        def _list() -> list[str]:
            blobs = gcs_client().list_blobs(bucket, prefix=name, retry=None, timeout=GCS_TIMEOUT)
            return [f"{GS_PREFIX}{bucket}/{b.name}" for b in blobs]

        return sorted(retrying("list", _list))
    prefix = os.fspath(prefix)
    # The directory to walk is the prefix itself when it names one, else its parent.
    root = prefix if prefix.endswith(os.sep) or os.path.isdir(prefix) else os.path.dirname(prefix)
    found = []
    for dirpath, _, filenames in os.walk(root or "."):
        for filename in filenames:
            path = os.path.join(dirpath, filename)
            if path.startswith(prefix):
                found.append(path)
    return sorted(found)


def delete(path: PathLike) -> None:
    """Delete one file/object; deleting what is not there is not an error.

    That makes it idempotent, which also covers a retry whose first attempt did delete
    the object but lost the response.
    """
    if is_gcs(path):
        blob = gcs_blob(str(path))

        def _delete() -> None:
            try:
                blob.delete(retry=None, timeout=GCS_TIMEOUT)
            except api_exceptions.NotFound:
                pass

        retrying("delete", _delete)
        return
    Path(path).unlink(missing_ok=True)


def delete_folder(prefix: PathLike) -> None:
    """Delete everything under a folder (local) or prefix (gs://), and a local folder itself."""
    for path in list_prefix(str(prefix).rstrip("/") + "/"):
        delete(path)
    if not is_gcs(prefix):
        shutil.rmtree(prefix, ignore_errors=True)


def atomic_write_local(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # the rename must not outrun the data after a crash
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


# ---------------------------------------------------------------------------------------
# Emulator
# ---------------------------------------------------------------------------------------

EMULATOR_PROJECT = "docbeam-emulator"

# An "authorized_user" credentials file whose access token never expires. google-auth
# loads it without any network call, and a valid token is never refreshed, so nothing
# ever contacts Google. The emulator ignores the Authorization header it produces.
_EMULATOR_CREDENTIALS = {
    "type": "authorized_user",
    "client_id": "docbeam-emulator",
    "client_secret": "unused",
    "refresh_token": "unused",
    "token": "docbeam-emulator-token",
    "expiry": "2999-12-31T23:59:59Z",
}


def is_emulator() -> bool:
    """True when STORAGE_EMULATOR_HOST redirects GCS traffic to an emulator."""
    return bool(os.environ.get(EMULATOR_HOST_ENV))


def emulator_credentials_file() -> Path:
    """Write (once) and return the offline credentials file described above."""
    path = Path(tempfile.gettempdir()) / f"docbeam-emulator-credentials-{os.getuid()}.json"
    data = json.dumps(_EMULATOR_CREDENTIALS).encode()
    if not path.exists() or path.read_bytes() != data:
        atomic_write_local(path, data)
    return path


def emulator_env(endpoint: str) -> dict[str, str]:
    """Environment variables that point google-cloud-storage and Beam at an emulator.

    Why the credentials variable: Beam's gcsio (every GcsIO, in every worker process)
    builds its client from `apache_beam.internal.gcp.auth.get_service_credentials`,
    which runs `google.auth.default()` under `retry.with_exponential_backoff(
    num_retries=4, initial_delay_secs=2)`. Without credentials each attempt fails
    fast (~0.2 s, the GCE metadata probe), but the fuzzed backoff between the five
    attempts adds up to a 15-30 s stall (~24 s measured) in every process that touches
    gs://, before Beam "connects anonymously". Beam has no option to skip that in
    gcsio: `--no_auth` is only read by the Dataflow API client and the container
    builder. Pointing GOOGLE_APPLICATION_CREDENTIALS at an offline, never-expiring
    token makes `google.auth.default()` succeed on the first try with no network, and
    the storage client sends that token to the emulator, which ignores it. Beam's
    worker subprocesses inherit the environment, so they skip the stall too. No Beam
    or google-auth code is patched.
    """
    return {
        EMULATOR_HOST_ENV: endpoint,
        "GOOGLE_APPLICATION_CREDENTIALS": str(emulator_credentials_file()),
        "GOOGLE_CLOUD_PROJECT": os.environ.get("GOOGLE_CLOUD_PROJECT", EMULATOR_PROJECT),
    }


def ensure_emulator_credentials() -> bool:
    """If STORAGE_EMULATOR_HOST is set, set the rest of `emulator_env` in os.environ.

    Call it once at program start, before the pipeline runs (the CLI does), so Beam and
    its worker processes start without the credential stall. Returns whether it did.
    Real credentials are replaced on purpose: with the emulator every GCS call is local,
    and real credentials would only send tokens there or try to refresh them online.
    """
    if not is_emulator():
        return False
    env = emulator_env(os.environ[EMULATOR_HOST_ENV])
    if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS") != env["GOOGLE_APPLICATION_CREDENTIALS"]:
        _LOG.info("storage: emulator at %s, using offline emulator credentials", env[EMULATOR_HOST_ENV])
    os.environ.update(env)
    return True
