"""Ctrl-C, remembered for the whole process.

Python raises KeyboardInterrupt wherever the main thread happens to be, and some places
swallow it: a garbage-collector callback that JAX registers at import prints "Exception
ignored" and carries on, and Beam's in-process runner re-raises it as a RuntimeError. So the
handler also sets PRESSED, installed as soon as a command starts, and the job checks it
before each wave: a Ctrl-C in the first seconds of a run (imports, planning) is not lost.
"""

import signal
import threading

PRESSED = threading.Event()


def on_sigint(signum, frame) -> None:
    PRESSED.set()
    signal.default_int_handler(signum, frame)


def install() -> None:
    """Remember Ctrl-C from now on (a no-op off the main thread, where signals cannot be set)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_sigint)
