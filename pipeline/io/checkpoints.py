"""Model checkpoints on a worker: `--model` as a local directory, or a gs:// prefix
downloaded once per machine into a cache, sha256-verified, never unpickled."""

from __future__ import annotations

import contextlib
import fcntl
import fnmatch
import functools
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from google.cloud import storage

from docbeam.model.checkpoint import sha256_of, sha256_unchanged
from docbeam.model.config import CheckpointError  # one error type for every checkpoint problem
from docbeam.pipeline.io import hub
from docbeam.pipeline.io.storage import (
    GCS_TIMEOUT,
    GS_PREFIX,
    exists,
    gcs_blob,
    gcs_client,
    is_gcs,
    retrying,
    split_gcs,
    write_bytes,
)

_LOG = logging.getLogger(__name__)

WEIGHTS_FILE = "model.safetensors"
REQUIRED_CHECKPOINT_FILES = ("config.json", WEIGHTS_FILE, "tokenizer.json")


def wanted(name: str) -> bool:
    """A file a checkpoint needs (the same patterns for gs:// and the hub), matched one path
    segment at a time: fnmatch's `*` also matches `/`, so `*_Pooling/config.json` alone would
    take `../../x/1_Pooling/config.json`."""
    parts = name.split("/")
    return any(
        len(parts) == len(p.split("/")) and all(map(fnmatch.fnmatchcase, parts, p.split("/")))
        for p in hub.CHECKPOINT_PATTERNS
    )


def leaves_folder(name: str) -> bool:
    """An object name (below the checkpoint's prefix) that, joined to a local folder, would not
    name a file inside it: absolute, or with an empty, `.` or `..` segment."""
    return name.startswith("/") or any(part in ("", ".", "..") for part in name.split("/"))


# Weights in these formats are pickles: loading them can run arbitrary code.
PICKLE_WEIGHT_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json", "model.pt", "model.pth")
SHA256_SIDECAR = WEIGHTS_FILE + ".sha256"
_CACHE_MANIFEST = ".docbeam-checkpoint.json"


class ChecksumMismatchError(CheckpointError):
    """A checkpoint file does not have the sha256 the caller expected (model.safetensors for
    --model-sha256; any file for the launcher's pinned manifest)."""


def default_checkpoint_cache() -> Path:
    return Path.home() / ".cache" / "docbeam" / "checkpoints"


def checkpoint_dir(
    path: str | None, expected_sha256: str | None = None, files_sha256: dict[str, str] | None = None
) -> Path:
    """The local directory of `--model` on this machine: the default model when None,
    a download (once per machine) for gs://, the hub cache's snapshot for ORG/NAME[@REV],
    the directory itself otherwise. With `files_sha256` (the launcher's manifest of the
    checkpoint, `checkpoint_files_sha256`), every file the loader reads is checked against it
    first: ChecksumMismatchError names the first that differs."""
    local = _checkpoint_dir(path, expected_sha256)
    if files_sha256 is not None:
        verify_checkpoint_files(path or "(default model)", local, files_sha256)
    return local


def _checkpoint_dir(path: str | None, expected_sha256: str | None) -> Path:
    if not path:
        from docbeam.model.checkpoint import default_checkpoint_dir

        return default_checkpoint_dir()
    if is_gcs(path):
        return localize_checkpoint(path, expected_sha256=expected_sha256)
    if hub.is_installed_default(path):  # the default's hub id: the installed package, no hub
        from docbeam.model.checkpoint import default_checkpoint_dir

        return default_checkpoint_dir()
    if hub.is_hub_id(path):
        return hub.resolve(path).path
    if not Path(path).is_dir():
        raise CheckpointError(
            f"{path}: not a directory (need config.json, model.safetensors, tokenizer.json){hub.path_hint(path)}"
        )
    return Path(path)


def _loaded_files(root: Path) -> list[str]:
    """The files of the checkpoint at `root` that the loader may read (`wanted`), sorted."""
    return sorted(n for n in (p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) if wanted(n))


def checkpoint_files_sha256(root: Path, weights_sha256: str | None = None) -> dict[str, str]:
    """sha256 of every file the loader may read from the checkpoint at `root`: the manifest
    the launcher records and workers check (`weights_sha256`: model.safetensors', already known)."""
    return {
        n: weights_sha256 if weights_sha256 and n == WEIGHTS_FILE else sha256_unchanged(root / n)
        for n in _loaded_files(root)
    }


def verify_checkpoint_files(source: str, root: Path, files_sha256: dict[str, str]) -> None:
    """Refuse the checkpoint at `root` unless its loadable files are exactly the pinned ones,
    byte for byte: a tokenizer, config or Pooling module changed after launch would otherwise
    give vectors that do not match the ones the run recorded."""
    present = _loaded_files(root)
    for name in sorted(set(files_sha256) | set(present)):
        expected = files_sha256.get(name)
        actual = _sha256_unchanged_since_checked(root / name) if name in present else None
        if actual != expected:
            raise ChecksumMismatchError(
                f"checkpoint {source!r}: {name} has sha256 {actual or '(missing)'}, the launcher recorded "
                f"{expected or '(no such file)'}; refusing to load it (the checkpoint changed after the run "
                "was planned)"
            )


def _sha256_unchanged_since_checked(path: Path) -> str:
    """sha256 of `path`, computed again only when the file changed (size, mtime or inode) since
    this process last hashed it: every DoFn setup of every wave verifies the checkpoint, and a
    2 GB model would be read again each time."""
    return sha256_unchanged(path)


def installed_default_record(weights_sha256: str) -> dict:
    """How a run names the installed default model: its package, version and each file's
    sha256 (what it is; a hub commit it cannot know offline would not be)."""
    from importlib import metadata

    from docbeam.model.checkpoint import DEFAULT_PACKAGE, default_checkpoint_dir

    files = checkpoint_files_sha256(default_checkpoint_dir(), weights_sha256)
    return {"package": DEFAULT_PACKAGE, "version": metadata.version(DEFAULT_PACKAGE), "files_sha256": files}


def staging_key(files_sha256: dict[str, str]) -> str:
    """The name of a staged checkpoint: a hash of every file's sha256, so that a tokenizer or
    Pooling module changed beside the same weights is staged anew, never served stale."""
    return hashlib.sha256(json.dumps(files_sha256, sort_keys=True).encode()).hexdigest()


def stage_checkpoint(local: Path, prefix: str, files_sha256: dict[str, str]) -> str:
    """Copy a local checkpoint's pinned files to `<prefix>/docbeam-models/<staging_key>` on GCS
    (once: content-addressed) for workers that cannot reach the hub. Returns that gs:// prefix."""
    dest = f"{prefix.rstrip('/')}/docbeam-models/{staging_key(files_sha256)}"
    # model.safetensors last: its presence marks a complete copy.
    if not exists(f"{dest}/{WEIGHTS_FILE}"):
        for name in sorted(files_sha256, key=lambda n: n == WEIGHTS_FILE):
            write_bytes(f"{dest}/{name}", (local / name).read_bytes())
    return dest


def localize_checkpoint(
    path: str | os.PathLike,
    cache_dir: Path | None = None,
    expected_sha256: str | None = None,
) -> Path:
    """A local directory holding the checkpoint at `path` (local dir or gs:// prefix).

    Local directories are returned as they are, after the same layout checks. A gs://
    checkpoint is downloaded once per machine into
    `<cache_dir>/<hash of the gs path and the object generations>`: a new upload to the
    same path (new generations) gets a new cache entry, an unchanged one is reused.
    Processes on one machine serialise on a lock file, and a download lands in a temp
    directory that is renamed into place only when complete, so a crash never leaves a
    half-written cache entry. The cache keeps model.safetensors' sha256 in a sidecar
    and re-verifies it on every hit: a corrupted entry is dropped and re-downloaded.

    Raises CheckpointError for a missing required file or pickle-only weights, and
    ChecksumMismatchError when `expected_sha256` is given and does not match (nothing
    is then returned, and a fresh download is not kept).
    """
    expected = expected_sha256.lower() if expected_sha256 else None
    if not is_gcs(path):
        local = Path(path)
        if not local.is_dir():
            raise CheckpointError(f"checkpoint {str(path)!r} is not a directory")
        names = {p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file()}
        _check_layout(str(path), names)
        if expected:
            _check_expected(str(path), expected, sha256_of(local / WEIGHTS_FILE))
        return local
    return _localize_gcs(str(path).rstrip("/"), cache_dir or default_checkpoint_cache(), expected)


def _check_layout(source: str, names: set[str]) -> None:
    if WEIGHTS_FILE not in names:
        pickled = sorted(n for n in names if n in PICKLE_WEIGHT_FILES)
        if pickled:
            raise CheckpointError(
                f"checkpoint {source!r} has only pickled weights ({', '.join(pickled)}), "
                f"no {WEIGHTS_FILE}. docbeam never unpickles weights: loading a pickle can "
                "run arbitrary code. Convert them to safetensors (e.g. "
                "`safetensors.torch.save_file(torch.load(f, weights_only=True), "
                f"'{WEIGHTS_FILE}')` on a trusted machine) and upload {WEIGHTS_FILE}."
            )
    missing = [n for n in REQUIRED_CHECKPOINT_FILES if n not in names]
    if missing:
        raise CheckpointError(
            f"checkpoint {source!r} lacks {', '.join(missing)} (needs {', '.join(REQUIRED_CHECKPOINT_FILES)})"
        )


def _check_expected(source: str, expected: str, actual: str) -> None:
    if actual != expected:
        raise ChecksumMismatchError(
            f"{WEIGHTS_FILE} of checkpoint {source!r} has sha256 {actual}, expected "
            f"{expected}; refusing to load it (wrong checkpoint, or altered weights)"
        )


def _localize_gcs(url: str, cache_root: Path, expected: str | None) -> Path:
    bucket, prefix = split_gcs(url)
    prefix = prefix + "/" if prefix else ""

    def _list() -> dict[str, storage.Blob]:
        blobs = gcs_client().list_blobs(bucket, prefix=prefix, retry=None, timeout=GCS_TIMEOUT)
        return {b.name[len(prefix) :]: b for b in blobs}

    blobs = retrying("list", _list)
    # A name that would be written outside the cache entry refuses the whole checkpoint: whoever
    # could upload it could upload other files too.
    for name in sorted(blobs):
        # "folder/" placeholders (the console's "create folder") are no files: never written.
        if not name.endswith("/") and name and leaves_folder(name):
            raise CheckpointError(f"checkpoint {url!r}: object {name!r} leaves the checkpoint folder; refusing it")
    _check_layout(url, set(blobs))
    listing = {n: {"generation": blobs[n].generation, "size": blobs[n].size} for n in sorted(blobs) if wanted(n)}
    key = hashlib.sha256(json.dumps([url, listing], sort_keys=True).encode()).hexdigest()[:24]

    cache_root.mkdir(parents=True, exist_ok=True)
    entry = cache_root / key
    with _file_lock(cache_root / f"{key}.lock"):
        # Holding the lock, no one else is downloading this key: temp dirs left for it
        # are from a crashed download.
        for stale in cache_root.glob(f".{key}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        digest = _valid_cache_entry(entry, url, listing)
        if digest is None:
            if entry.exists():
                _LOG.warning("checkpoint cache %s is incomplete or corrupt: downloading again", entry)
                shutil.rmtree(entry)
            digest = _download_checkpoint(bucket, prefix, url, listing, entry, expected)
        else:
            _LOG.info("checkpoint %s: using cache %s", url, entry)
    if expected:
        _check_expected(url, expected, digest)
    return entry


def _download(blob: storage.Blob, target: Path) -> None:
    blob.download_to_filename(str(target), retry=None, timeout=GCS_TIMEOUT)


def _download_checkpoint(bucket: str, prefix: str, url: str, listing: dict, entry: Path, expected: str | None) -> str:
    tmp = Path(tempfile.mkdtemp(dir=entry.parent, prefix=f".{entry.name}.tmp-"))
    try:
        for name, meta in listing.items():
            target = tmp / name
            if leaves_folder(name) or not target.resolve().is_relative_to(tmp.resolve()):  # checked above too
                raise CheckpointError(f"checkpoint {url!r}: object {name!r} leaves the checkpoint folder; refusing it")
            target.parent.mkdir(parents=True, exist_ok=True)
            # Pin the generation that the cache key names, so a concurrent upload to the
            # same path cannot mix two versions into one entry.
            blob = gcs_blob(f"{GS_PREFIX}{bucket}/{prefix}{name}", generation=meta["generation"])
            retrying("download", functools.partial(_download, blob, target))
        digest = sha256_of(tmp / WEIGHTS_FILE)
        if expected:
            _check_expected(url, expected, digest)
        (tmp / SHA256_SIDECAR).write_text(f"{digest}  {WEIGHTS_FILE}\n")
        (tmp / _CACHE_MANIFEST).write_text(json.dumps({"source": url, "files": listing}))
        os.rename(tmp, entry)  # atomic: the entry appears complete or not at all
        _LOG.info("checkpoint %s: downloaded to %s (sha256 %s)", url, entry, digest)
        return digest
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _valid_cache_entry(entry: Path, url: str, listing: dict) -> str | None:
    """model.safetensors' sha256 if `entry` is complete and intact, else None."""
    try:
        manifest = json.loads((entry / _CACHE_MANIFEST).read_text())
        recorded = (entry / SHA256_SIDECAR).read_text().split()[0]
    except (OSError, ValueError, IndexError):
        return None
    if manifest != {"source": url, "files": listing}:
        return None
    for name, meta in listing.items():
        try:
            if (entry / name).stat().st_size != meta["size"]:
                return None
        except OSError:
            return None
    if sha256_of(entry / WEIGHTS_FILE) != recorded:
        return None
    return recorded


@contextlib.contextmanager
def _file_lock(lock_path: Path) -> Iterator[None]:
    """Exclusive lock across processes (and threads: each call opens its own fd).

    The kernel drops the lock if the holder dies, so a crashed download never wedges
    the other workers. The lock file itself stays: deleting it would race.
    """
    with open(lock_path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
