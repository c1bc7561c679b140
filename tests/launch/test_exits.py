"""How `docbeam run` ends when it cannot or should not go on: Ctrl-C, an --output it cannot
use, a folder it did not write. Real subprocesses, real signals, real files."""

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import SAMPLES, write_jsonl

DOCBEAM = str(Path(sys.executable).parent / "docbeam")
# From the signal to the exit, on a loaded machine (it takes well under a second on an idle one;
# before the fix, 3-20 s with Beam's stack traces).
INTERRUPT_BOUND_S = 15.0


def _corpus(folder: Path) -> Path:
    """Six JSONL files whose encoding takes tens of seconds, and an HTML page (parsed in the
    sandbox child, which a process-group Ctrl-C reaches too)."""
    folder.mkdir()
    rng = random.Random(7)
    words = "river engine protocol window garden letter market signal harbour lantern meadow copper".split()
    for i in range(6):
        rows = [{"id": f"{i}-{j}", "text": " ".join(rng.choice(words) for _ in range(600))} for j in range(60)]
        write_jsonl(folder / f"part-{i}.jsonl", rows)
    shutil.copy(SAMPLES / "page.html", folder / "page.html")
    return folder


class _Run:
    """A `docbeam run` subprocess in its own process group, its stderr read as it comes."""

    def __init__(self, *args: str):
        env = {**os.environ, "JAX_PLATFORMS": "cpu", "DOCBEAM_PROGRESS_SECONDS": "1"}
        self.proc = subprocess.Popen(
            [DOCBEAM, "run", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,  # as a shell runs a command: its own process group
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, f"no {text!r} in:\n" + "".join(self.lines)
            time.sleep(0.05)

    def finish(self, timeout: float) -> tuple[int, str]:
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self._reader.join(timeout=10)
        return rc, "".join(self.lines)


@pytest.mark.slow
@pytest.mark.parametrize(
    "target, wave_files, expected",
    [
        ("group", None, r"nothing was committed \(one wave\); rerun with --overwrite"),
        ("pid", None, r"nothing was committed \(one wave\); rerun with --overwrite"),
        ("pid", "1", r"1 of 7 waves committed; run the same command with --resume to continue"),
    ],
)
def test_ctrl_c_while_encoding_is_one_line_and_exit_130_promptly(tmp_path, target, wave_files, expected):
    out = tmp_path / "out"
    args = ["--input", str(_corpus(tmp_path / "in") / "*"), "--output", str(out)]
    run = _Run(*args, *(["--wave-files", wave_files] if wave_files else []))
    # Mid-encode: the first encoder shape is ready (one wave), or the second wave is under way.
    run.wait_for("wave 2/7" if wave_files else "encoder for [")
    time.sleep(1.5)
    sent = time.monotonic()
    if target == "group":  # Ctrl-C in a terminal: the whole foreground process group
        os.killpg(run.proc.pid, signal.SIGINT)
    else:  # `kill -INT PID`: the main process only
        run.proc.send_signal(signal.SIGINT)
    rc, err = run.finish(timeout=120)
    took = time.monotonic() - sent
    assert rc == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(rf"docbeam run: interrupted: {expected}.* \({re.escape(str(out))}\)", last), err
    assert [line for line in err.splitlines() if "interrupted" in line] == [last], err
    assert took < INTERRUPT_BOUND_S, f"{took:.1f}s from the signal to the exit"
