"""Parsers that run native third-party code (PDFium, lxml) run in a child process, one call at
a time. Pure: no Beam here.

Why a process: a call past its deadline can only be stopped by killing what runs it; a
segfault or an abort (PDFium aborts when an allocation fails) kills only the child; a memory
cap (RLIMIT_DATA) bounds the child, not the worker; and PDFium, which must never be called
from two threads at once, never is: each child serves one caller (a ParseFile DoFn, one per
Beam worker thread) and one call at a time.

A failed call raises ParseProblem(code, message): `parse_timeout` (the child is killed),
`parse_crashed` (the child died, or the library raised something its adapter does not know:
the child is ended too), or the adapter's own code (`pdf_encrypted`, ...); the next call
starts a fresh child. The child
runs `python -m docbeam.pipeline.ingest.sandbox FD MEMORY_MB` over a socket. A call names
the function itself (`sandbox.call(pdf_text.extract, data, ...)`): a module-level function,
which travels pickled as its module and name and is imported by the child (the worker
trusts itself). So the worker imports the adapters but not their libraries: the adapters
that run here import those inside their functions, and only the child calls them. Replies
come back as JSON, plain data only, because the child has parsed hostile bytes and a pickle
from it could run anything in the worker. The child gets only the environment it needs (no
credentials): see `_child_env`.
"""

import importlib
import json
import os
import pickle
import resource
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVarTuple

Ts = TypeVarTuple("Ts")

# Imported by the child before it says it is ready, so a call's deadline never pays for them:
# the adapters that run in the sandbox and the libraries they import inside their functions
# (tests/ingest/test_format_table.py keeps this list whole). Names, not imports: a warm-up
# only, and the adapters import this module (ParseProblem), so importing them here would be a
# cycle.
PRELOAD = (
    "docbeam.pipeline.ingest.adapters.pdf_text",
    "docbeam.pipeline.ingest.adapters.docx_text",
    "docbeam.pipeline.ingest.adapters.html_main",
    "docbeam.pipeline.ingest.adapters.html_visible",
    "docbeam.pipeline.ingest.adapters.markdown_blocks",
    "pypdfium2",
    "pypdfium2.raw",
    "docx",
    "docx.opc.exceptions",
    "docx.table",
    "lxml.etree",
    "trafilatura",
    "trafilatura.settings",
    "trafilatura.utils",
    "markdown_it",
    "yaml",
)
START_TIMEOUT_S = 120.0  # imports on a loaded worker; a child that cannot start is a crash


class ParseProblem(Exception):
    """A file the parser cannot turn into text: an error code for errors/ and a message."""

    def __init__(self, code: str, message: str):
        super().__init__(code, message)
        self.code, self.message = code, message


class Sandbox:
    """One child process, started on the first call; `close()` (or `with`) ends it."""

    def __init__(self, timeout_s: float = 120.0, memory_mb: int = 2048):
        self.timeout_s, self.memory_mb = timeout_s, memory_mb
        self._proc: subprocess.Popen | None = None
        self._conn: Connection | None = None
        self.starts = 0  # children started (a restart after a timeout or crash counts)

    def call(self, target: Callable[[*Ts], object], *args: *Ts) -> Any:
        """`target(*args)` in the child: its return value, or ParseProblem. `target` is a
        module-level function (the child imports it by its module and name). The value comes
        back as JSON brings it, plain data with tuples turned into lists: hence Any, not the
        target's own return type."""
        conn = self._ready()
        try:
            conn.send((target, args))
        except OSError:  # the child died between calls: start another, once
            self._stop()
            conn = self._ready()
            conn.send((target, args))
        if not conn.poll(self.timeout_s):
            self._stop()
            raise ParseProblem("parse_timeout", f"parser still running after {self.timeout_s:g}s; stopped")
        try:
            status, value = _load(conn.recv_bytes(self.memory_mb << 20))  # no reply is bigger than the child
        except (EOFError, OSError):
            raise ParseProblem("parse_crashed", f"parser process died ({self._stop()})") from None
        except ValueError as exc:  # not the JSON pair a sound child sends
            raise ParseProblem("parse_crashed", f"parser sent a malformed reply ({exc}; {self._stop()})") from None
        if status == "ok":
            return value
        if status == "problem":
            raise ParseProblem(*value)  # [code, message]
        self._stop()  # a library that failed in a way nobody expected may have broken its state: start afresh
        if value.startswith("MemoryError"):
            value = f"ran out of memory (limit {self.memory_mb} MiB)"
        raise ParseProblem("parse_crashed", f"parser failed: {value}")

    def _ready(self) -> Connection:
        if self._conn is not None and self._proc is not None and self._proc.poll() is None:
            return self._conn
        self._stop()
        mine, theirs = socket.socketpair()
        for end in (mine, theirs):
            end.setblocking(True)  # whatever socket.setdefaulttimeout() says (gcsio sets one): the child blocks
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "docbeam.pipeline.ingest.sandbox", str(theirs.fileno()), str(self.memory_mb)],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,  # stderr stays: a crashing library's last words go to the worker log
                env=_child_env(),
            )
        finally:
            theirs.close()
        self._conn = Connection(mine.detach())
        self.starts += 1
        if not self._conn.poll(START_TIMEOUT_S):
            raise ParseProblem("parse_crashed", f"parser process did not start ({self._stop()})")
        try:
            self._conn.recv_bytes(64)  # "ready"
        except (EOFError, OSError):
            raise ParseProblem("parse_crashed", f"parser process did not start ({self._stop()})") from None
        return self._conn

    def _stop(self) -> str:
        """Kill the child (if any); how it ended, in words."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is None:
            return "no process"
        proc, self._proc = self._proc, None
        if proc.poll() is None:
            proc.kill()
        code = proc.wait()
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit status {code}"

    @property
    def pid(self) -> int | None:
        """The child's process id while one runs (benchmarks read its CPU time)."""
        return self._proc.pid if self._proc is not None else None

    def close(self) -> None:
        self._stop()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# What the child keeps of the worker's environment: enough to find Python, docbeam and a
# locale; nothing else (cloud credentials, tokens and the like stay in the worker).
CHILD_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")


def _child_env() -> dict[str, str]:
    env = {k: os.environ[k] for k in CHILD_ENV if k in os.environ}
    # the worker's own import path (a Beam worker or a test may have added to it), so the
    # child imports the same docbeam and libraries
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _dump(reply: tuple[str, Any]) -> bytes:
    # surrogatepass: text with lone surrogates (PDFium gives some) travels as it is
    return json.dumps(reply, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _load(data: bytes) -> tuple[str, Any]:
    """[status, value] as `_dump` writes it; anything else is ValueError (a malformed reply),
    so that no reply, however built, can raise another error in the worker."""
    reply = json.loads(data.decode("utf-8", "surrogatepass"))
    if not (isinstance(reply, list) and len(reply) == 2 and reply[0] in ("ok", "problem", "raised")):
        raise ValueError(f"not a [status, value] pair: {str(reply)[:80]!r}")
    status, value = reply
    if status == "problem" and not (
        isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)
    ):
        raise ValueError(f"a problem is [code, message], not {str(value)[:80]!r}")
    if status == "raised" and not isinstance(value, str):
        raise ValueError(f"a raised error is a string, not {str(value)[:80]!r}")
    return status, value


def _serve(fd: int, memory_mb: int) -> None:
    conn = Connection(fd)
    for name in PRELOAD:
        importlib.import_module(name)
    limit = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    conn.send_bytes(b"ready")
    while True:
        try:
            request = conn.recv_bytes()
        except EOFError:  # the caller closed the socket (or died): nothing left to do
            return
        args: Any = ()
        try:
            # here, not in recv(): a target whose module does not import is this call's error
            target, args = pickle.loads(request)  # imports the target's module by its name
            del request  # the arguments' bytes are held once, not twice, under the memory cap
            reply = ("ok", target(*args))
        except ParseProblem as exc:
            reply = ("problem", (exc.code, exc.message))
        except Exception as exc:  # the library failed in a way its adapter does not know
            reply = ("raised", f"{type(exc).__name__}: {exc}"[:500])
        del args
        try:
            data = _dump(reply)
        except (TypeError, ValueError) as exc:  # an adapter returned something that is not plain data
            data = _dump(("raised", f"reply is not plain data ({exc})"[:500]))
        del reply
        conn.send_bytes(data)


if __name__ == "__main__":
    # Ctrl-C reaches the whole process group: the child ends quietly (no KeyboardInterrupt
    # stack on the run's stderr); the parent reports the interruption.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    # Serve from the imported module, not __main__: the adapters raise *its* ParseProblem.
    from docbeam.pipeline.ingest.sandbox import _serve

    _serve(int(sys.argv[1]), int(sys.argv[2]))
