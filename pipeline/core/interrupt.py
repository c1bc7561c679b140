"""Ctrl-C, remembered for the whole process.

Python raises KeyboardInterrupt wherever the main thread happens to be, and some places
swallow it: a garbage-collector callback that JAX registers at import prints "Exception
ignored" and carries on, and Beam's in-process runner re-raises it as a RuntimeError. So the
handler also sets PRESSED, installed as soon as a command starts, and the job checks it
before each wave: a Ctrl-C in the first seconds of a run (imports, planning) is not lost.
Where a callback swallows it, Python would print "Exception ignored ... KeyboardInterrupt" with
a traceback: PRESSED already holds it, so that report is dropped (other unraisable errors are
reported as before).
"""

import contextlib
import signal
import sys
import threading
from collections.abc import Iterator

PRESSED = threading.Event()
_held = [False]  # inside `held()`: Ctrl-C is remembered, raised when the block ends


def on_sigint(signum, frame) -> None:
    PRESSED.set()
    if not _held[0]:
        signal.default_int_handler(signum, frame)


@contextlib.contextmanager
def held() -> Iterator[None]:
    """Ctrl-C held back until the block ends, then raised: an exception raised inside a native
    library's import (jaxlib's, at the first `import jax`) aborted or crashed the process (exit
    -6 or -11 instead of 130, about 1 run in 5 with Ctrl-C at 1 s)."""
    _held[0] = True
    try:
        yield
    finally:
        _held[0] = False
    if PRESSED.is_set():
        raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and PRESSED.is_set():
        return  # remembered: the run stops at its next check and says so in one line
    sys.__unraisablehook__(unraisable)


def install() -> None:
    """Remember Ctrl-C from now on (a no-op off the main thread, where signals cannot be set)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_sigint)
        sys.unraisablehook = _unraisable
