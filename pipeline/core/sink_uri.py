"""`--sink URI`: which vector store a run's chunks also go to, parsed and checked before the job.

    milvus:///path/file.db            Milvus Lite (a local file; collection `docbeam_chunks`)
    milvus://host:port/collection     a Milvus server (user:password@ or ?token= for auth)
    qdrant:///path                    Qdrant local mode (a folder; collection `docbeam_chunks`)
    qdrant://host:port/collection     a Qdrant server (?api_key= for auth, ?https=1)
    bigquery://PROJECT.DATASET.TABLE  BigQuery (a cross-language writer: Java on the launcher)

Secrets (the password of `user:password@`, and every query parameter whose name says key,
token, secret, pass or auth: `token=`, `api_key=`, `access_token=`) never leave this module in
anything but `SinkUri.secrets`: `redacted` is what manifests, logs and error messages show,
and `redact_text` takes the URI and each secret value out of any other text.
No Beam, no store client here.
"""

import contextlib
import re
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO

SCHEMES = ("milvus", "qdrant", "bigquery")
DEFAULT_COLLECTION = "docbeam_chunks"
_SECRET_WORDS = ("key", "token", "secret", "pass", "auth")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,254}")
_BQ_TABLE = re.compile(r"([a-z][a-z0-9-]{4,28}[a-z0-9]|[a-z0-9.:-]+)\.([A-Za-z0-9_]{1,1024})\.([\w$-]{1,1024})")


@dataclass(frozen=True)
class SinkUri:
    scheme: str  # milvus | qdrant | bigquery
    redacted: str  # the URI with every secret replaced by ***
    path: str | None = None  # local store: the file (Milvus Lite) or folder (Qdrant local)
    host: str | None = None
    port: int | None = None
    collection: str = DEFAULT_COLLECTION  # BigQuery: PROJECT.DATASET.TABLE
    user: str | None = None
    params: dict[str, str] = field(default_factory=dict)  # non-secret query parameters
    secrets: dict[str, str] = field(default_factory=dict, repr=False)  # password / token / api_key ...

    @property
    def local(self) -> bool:
        """A file-based store in this machine's file system: one writer process at a time."""
        return self.path is not None

    def __str__(self) -> str:
        return self.redacted


def is_secret_param(name: str) -> bool:
    """A query parameter whose value is a credential (`api-key`, `access_token`, `X-Auth`...)."""
    norm = name.lower().replace("-", "").replace("_", "")
    return any(word in norm for word in _SECRET_WORDS)


def _split_userinfo(uri: str) -> tuple[str, str | None, str]:
    """(`scheme://`, userinfo or None, the rest) split on the LAST `@` after `://`: an unencoded
    `/`, `?`, `#` or `@` in a password would make urlsplit cut the password in two and show a
    part of it as host, path, query or fragment."""
    head, sep, rest = uri.partition("://")
    if not sep or "@" not in rest:
        return uri, None, ""
    userinfo, _, after = rest.rpartition("@")
    return head + sep, userinfo, after


def _redacted_userinfo(userinfo: str) -> str:
    name, colon, _ = userinfo.partition(":")
    if any(ch in userinfo for ch in "/?#@"):
        return "***"  # cannot tell user from password: hide both
    return f"{name}:***" if colon else name


def redact(uri: str) -> str:
    """`uri` with the password of its user part and every secret query parameter as ***."""
    head, userinfo, after = _split_userinfo(uri)
    if userinfo is not None:
        uri = f"{head}{_redacted_userinfo(userinfo)}@{after}"
    parts = urllib.parse.urlsplit(uri)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    safe = [(k, "***" if is_secret_param(k) else v) for k, v in query]
    shown = f"{parts.scheme}://{parts.netloc}{parts.path}"  # urlunsplit would drop the empty host of scheme:///path
    return shown + (f"?{urllib.parse.urlencode(safe, safe='*')}" if safe else "")


def secret_values(uri: str) -> list[str]:
    """Every secret in `uri` as it may appear in a client's message: as written and
    percent-decoded, longest first (so no secret is left half-replaced)."""
    values: set[str] = set()
    _, userinfo, after = _split_userinfo(uri)
    if userinfo is not None and ":" in userinfo:
        values.add(userinfo.partition(":")[2])
    query = (after if userinfo is not None else uri).partition("?")[2].partition("#")[0]
    for pair in query.split("&"):
        name, eq, value = pair.partition("=")
        if eq and is_secret_param(urllib.parse.unquote_plus(name)):
            values.add(value)
    values |= {urllib.parse.unquote_plus(v) for v in values} | {urllib.parse.unquote(v) for v in values}
    return sorted((v for v in values if v), key=len, reverse=True)


def redact_text(text: str, sinks: list[str]) -> str:
    """`text` with each of the sink URIs (as given) replaced by its redacted form, and each of
    their secret values (raw and decoded) by ***: a client's error may quote either."""
    for uri in sinks:
        text = text.replace(uri, redact(uri))
    for uri in sinks:
        for value in secret_values(uri):
            text = text.replace(value, "***")
    return text


def parse(uri: str) -> SinkUri:
    """A checked sink; ValueError naming what is wrong (the message never holds a secret)."""
    shown = redact(uri)
    _, userinfo, _ = _split_userinfo(uri)
    if userinfo is not None and any(ch in userinfo for ch in "/?#@"):
        raise ValueError(
            f"{shown!r}: the user:password part holds a / ? # or @: special characters in a password "
            "must be percent-encoded (/ as %2F, ? as %3F, # as %23, @ as %40)"
        )
    parts = urllib.parse.urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES or "://" not in uri:  # `qdrant:tmp/q` would be a folder in the working directory
        if "://" not in uri:  # redact() assumes scheme://; show it as typed unless it may hold a password
            shown = "***" if "@" in uri else uri
        raise ValueError(
            f"{shown!r}: a sink URI is one of {', '.join(s + '://' for s in SCHEMES)} "
            f"(a local store: milvus:///absolute/path.db or qdrant:///absolute/folder)"
        )
    if parts.fragment:
        raise ValueError(f"{shown!r}: a sink URI takes no #fragment")
    query = dict(urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    secrets = {k.lower(): v for k, v in query.items() if is_secret_param(k)}
    params = {k: v for k, v in query.items() if not is_secret_param(k)}
    try:
        user, password, host, port = parts.username, parts.password, parts.hostname, parts.port
    except ValueError:
        raise ValueError(f"{shown!r}: the port is not a number from 0 to 65535") from None
    if password:
        secrets["password"] = urllib.parse.unquote(password)
    if scheme == "bigquery":
        table = parts.netloc + parts.path
        if user or query or not _BQ_TABLE.fullmatch(table):
            raise ValueError(f"{shown!r}: expected bigquery://PROJECT.DATASET.TABLE")
        return SinkUri(scheme, shown, collection=table)
    if not host:  # milvus:///path/file.db, qdrant:///path: a local store
        path = urllib.parse.unquote(parts.path)
        if not path or path == "/" or query or user:
            raise ValueError(
                f"{shown!r}: a local store is {scheme}:///absolute/path" + (".db" if scheme == "milvus" else "")
            )
        if scheme == "milvus" and not path.endswith(".db"):
            raise ValueError(f"{shown!r}: Milvus Lite needs a file name ending in .db")
        return SinkUri(scheme, shown, path=path)
    if scheme == "qdrant" and (user or password):  # the client has no user:password: it would never be sent
        raise ValueError(f"{shown!r}: Qdrant takes no user:password@; give its key as ?api_key=")
    collection = parts.path.strip("/") or DEFAULT_COLLECTION
    if not _NAME.fullmatch(collection):
        local = f" (a local file is {scheme}:///{host}{parts.path}: three slashes)" if "." in collection else ""
        raise ValueError(f"{shown!r}: collection {collection!r} is no valid name (letters, digits, _){local}")
    return SinkUri(
        scheme, shown, host=host, port=port, collection=collection, user=user, params=params, secrets=secrets
    )


def redact_args(argv: list[str]) -> list[str]:
    """A command line with every sink URI in it redacted (`--sink URI` and `--sink=URI`)."""
    out = []
    for arg in argv:
        flag, eq, value = arg.partition("=")
        if eq and flag in ("--sink",):
            out.append(f"{flag}={redact(value)}")
        elif arg.split("://", 1)[0].lower() in SCHEMES:
            out.append(redact(arg))
        else:
            out.append(arg)
    return out


def without_sinks(argv: list[str]) -> list[str]:
    """A command line less its `--sink URI` / `--sink=URI` flags."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--sink":
            skip = True
        elif not arg.startswith("--sink="):
            out.append(arg)
    return out


def sinks_in(argv: list[str]) -> list[str]:
    """The URIs of a command line's `--sink URI` / `--sink=URI` flags."""
    out, take = [], False
    for arg in argv:
        if take:
            out.append(arg)
            take = False
        elif arg == "--sink":
            take = True
        elif arg.startswith("--sink="):
            out.append(arg.partition("=")[2])
    return out


class RedactedStream:
    """A text stream that takes the sinks' URIs and secrets out of everything written to it.
    docbeam's own lines are redacted where they are made; this catches the rest: Beam's error
    log lines and the store clients' quote a server's answer, which may echo the key."""

    def __init__(self, stream: TextIO, sinks: list[str]):
        self._stream, self._sinks = stream, sinks

    def write(self, text: str) -> int:
        self._stream.write(redact_text(text, self._sinks))
        return len(text)

    def __getattr__(self, name: str):  # flush, fileno, isatty, encoding...: the stream's own
        return getattr(self._stream, name)


@contextlib.contextmanager
def redacted_output(argv: list[str]) -> Iterator[None]:
    """Standard output and error redacted for the sinks of `argv` while the block runs (every
    line the process prints: logging handlers made inside it write through them)."""
    sinks = sinks_in(argv)
    if not sinks:
        yield
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactedStream(sys.stdout, sinks), RedactedStream(sys.stderr, sinks)  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
