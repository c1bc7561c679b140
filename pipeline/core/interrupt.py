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

import signal
import sys
import threading

PRESSED = threading.Event()


def on_sigint(signum, frame) -> None:
    PRESSED.set()
    signal.default_int_handler(signum, frame)


def _unraisable(unraisable) -> None:
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and PRESSED.is_set():
        return  # remembered: the run stops at its next check and says so in one line
    sys.__unraisablehook__(unraisable)


def install() -> None:
    """Remember Ctrl-C from now on (a no-op off the main thread, where signals cannot be set)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_sigint)
        sys.unraisablehook = _unraisable
