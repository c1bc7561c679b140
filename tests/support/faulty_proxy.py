"""A fault-injecting HTTP proxy to put between GCS clients and the emulator.

Clients reach it through STORAGE_EMULATOR_HOST like any emulator. It forwards every
request (JSON API, media downloads, multipart and resumable uploads, batch requests)
byte for byte, and fails a configurable fraction of them:

  "503"   answer 503 with a GCS-style JSON error, without forwarding
  "429"   answer 429 (rate limit), without forwarding
  "reset" read the request, then reset the TCP connection (no response at all)
  "slow"  wait `slow_s`, then forward normally
  "drop"  forward (the server acts!), then reset instead of answering; this checks
          that retried operations are idempotent. Not in the default mix.

Faults are deterministic: whether the n-th request for a given "METHOD /path" fails,
and how, is a hash of (seed, method, path, n), whatever the thread interleaving. The
same request never fails more than `max_consecutive` times in a row, so a client
that retries at least that many times always gets through.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import re
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

FAULT_KINDS = ("503", "429", "reset", "slow", "drop")
DEFAULT_KINDS = ("503", "429", "reset", "slow")

# Per-connection headers that a proxy must not pass on (RFC 9110 7.6.1). Bodies are
# always re-sent with a Content-Length, so the framing headers go too.
_HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
}


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str  # with the query string
    outcome: str  # upstream status code as text, or the fault kind


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients drop kept-alive connections whenever they like (and after our own
        # resets): that is normal traffic here, not an error worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FaultyProxy:
    """Threaded proxy on 127.0.0.1; use as a context manager or start()/stop()."""

    def __init__(
        self,
        upstream: str,
        *,
        rate: float = 0.0,
        kinds: Sequence[str] = DEFAULT_KINDS,
        seed: int = 0,
        max_consecutive: int = 2,
        slow_s: float = 0.2,
        only: str | None = None,
    ) -> None:
        parts = urlsplit(upstream)
        self.upstream_host = parts.hostname or "127.0.0.1"
        self.upstream_port = parts.port or 80
        self.upstream_url = f"http://{self.upstream_host}:{self.upstream_port}"
        self._lock = threading.Lock()
        self.configure(rate=rate, kinds=kinds, seed=seed, max_consecutive=max_consecutive, slow_s=slow_s, only=only)
        self._server = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        self._thread: threading.Thread | None = None

    # -- configuration and statistics --------------------------------------------------

    def configure(
        self,
        *,
        rate: float,
        kinds: Sequence[str] = DEFAULT_KINDS,
        seed: int = 0,
        max_consecutive: int = 2,
        slow_s: float = 0.2,
        only: str | None = None,
    ) -> None:
        """Set the fault mix and reset the counters.

        `only`: a regex searched in "METHOD /path?query"; faults hit matching requests
        only (e.g. r"^POST /batch/" for the batch endpoint).
        """
        unknown = set(kinds) - set(FAULT_KINDS)
        if unknown or not kinds:
            raise ValueError(f"fault kinds must be a non-empty subset of {FAULT_KINDS}")
        if not 0.0 <= rate <= 1.0:
            raise ValueError("rate must be within [0, 1]")
        with self._lock:
            self.rate = rate
            self.kinds = tuple(kinds)
            self.seed = seed
            self.max_consecutive = max_consecutive
            self.slow_s = slow_s
            self.only = re.compile(only) if only else None
            self.injected: Counter[str] = Counter()
            self.log: list[LoggedRequest] = []
            self._seen: Counter[str] = Counter()
            self._consecutive: Counter[str] = Counter()

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def faults(self) -> int:
        """Injected failures (every kind except "slow", which still succeeds)."""
        with self._lock:
            return sum(n for kind, n in self.injected.items() if kind != "slow")

    def requests(self, pattern: str = "") -> list[LoggedRequest]:
        """Logged requests whose "METHOD /path?query" matches the regex `pattern`."""
        rx = re.compile(pattern)
        with self._lock:
            return [r for r in self.log if rx.search(f"{r.method} {r.path}")]

    # -- lifecycle ----------------------------------------------------------------------

    def start(self) -> FaultyProxy:
        # A short poll interval makes stop() (and so each test's teardown) quick.
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> FaultyProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- fault decisions ----------------------------------------------------------------

    def _decide(self, method: str, path: str) -> str | None:
        key = f"{method} {path.split('?', 1)[0]}"
        with self._lock:
            if self.rate == 0.0 or (self.only and not self.only.search(f"{method} {path}")):
                return None
            n = self._seen[key]
            self._seen[key] += 1
            if self._consecutive[key] >= self.max_consecutive:
                self._consecutive[key] = 0
                return None
            digest = hashlib.sha256(f"{self.seed}|{key}|{n}".encode()).digest()
            draw = int.from_bytes(digest[:8], "big") / 2**64
            if draw >= self.rate:
                self._consecutive[key] = 0
                return None
            kind = self.kinds[int.from_bytes(digest[8:12], "big") % len(self.kinds)]
            self.injected[kind] += 1
            # A slow answer is still an answer: it does not count towards the cap.
            self._consecutive[key] = 0 if kind == "slow" else self._consecutive[key] + 1
            return kind

    def _record(self, method: str, path: str, outcome: str) -> None:
        with self._lock:
            self.log.append(LoggedRequest(method, path, outcome))


def _make_handler(proxy: FaultyProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # HTTP/1.1 keeps client connections alive, as GCS does, so a "reset" can hit a
        # pooled connection the client believed healthy.
        protocol_version = "HTTP/1.1"

        def do_request(self) -> None:
            body = self._read_body()
            fault = proxy._decide(self.command, self.path)
            if fault in ("503", "429"):
                proxy._record(self.command, self.path, fault)
                self._send_error_json(int(fault))
                return
            if fault == "reset":
                proxy._record(self.command, self.path, fault)
                self._reset()
                return
            if fault == "slow":
                time.sleep(proxy.slow_s)
            try:
                status, reason, headers, payload = self._forward(body)
            except OSError as exc:
                proxy._record(self.command, self.path, "upstream-error")
                self._send_error_json(502, f"upstream unreachable: {exc}")
                return
            if fault == "drop":
                proxy._record(self.command, self.path, fault)
                self._reset()
                return
            proxy._record(self.command, self.path, str(status))
            payload = self._point_links_here(payload)
            self.send_response_only(status, reason)
            for name, value in headers:
                if name.lower() not in _HOP_BY_HOP:
                    self.send_header(name, value.replace(proxy.upstream_url, proxy.endpoint))
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_request

        def _point_links_here(self, payload: bytes) -> bytes:
            # The emulator writes its own address into metadata (mediaLink is fixed when
            # an object is created, e.g. by a set-up upload that bypassed this proxy).
            # Clients follow those links, so they must lead back through the proxy.
            # Object contents (media downloads) pass untouched.
            if "alt=media" in self.path or self.path.startswith("/download/"):
                return payload
            return payload.replace(proxy.upstream_url.encode(), proxy.endpoint.encode())

        def _read_body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass  # trailers
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _forward(self, body: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
            conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=60)
            try:
                # The Host header goes through unchanged: the emulator builds resumable
                # upload URLs from it, and those must point back at this proxy.
                conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in _HOP_BY_HOP:
                        conn.putheader(name, value)
                if body or self.command in ("POST", "PUT", "PATCH"):
                    conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body or None)
                resp = conn.getresponse()
                return resp.status, resp.reason, resp.getheaders(), resp.read()
            finally:
                conn.close()

        def _send_error_json(self, status: int, message: str = "injected by FaultyProxy"):
            reason = {429: "rateLimitExceeded", 503: "backendError"}.get(status, "proxyError")
            payload = json.dumps(
                {"error": {"code": status, "message": message, "errors": [{"message": message, "reason": reason}]}}
            ).encode()
            self.send_response_only(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _reset(self) -> None:
            # SO_LINGER(on, 0) makes close() send RST: the client sees a connection
            # reset, not a clean end of stream.
            with contextlib.suppress(OSError):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.connection.close()
            self.close_connection = True

        def log_message(self, format: str, *args: object) -> None:
            pass  # the request log is kept in proxy.log

    return Handler


@contextlib.contextmanager
def run_faulty_proxy(upstream: str, **config: object) -> Iterator[FaultyProxy]:
    with FaultyProxy(upstream, **config) as proxy:  # type: ignore[arg-type]
        yield proxy
