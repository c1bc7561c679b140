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
    "target, extra, expected",
    [
        ("group", (), r"nothing was committed \(one wave\); rerun with --overwrite"),
        ("pid", (), r"nothing was committed \(one wave\); rerun with --overwrite"),
        ("pid", ("--wave-files", "1"), r"1 of 7 waves committed; run the same command with --resume to continue"),
        # The --budget-usd sample is a Beam run of its own, before the first wave.
        ("pid", ("--budget-usd", "1000", "--budget-sample", "100"), r"nothing was committed \(one wave\)"),
    ],
)
def test_ctrl_c_while_encoding_is_one_line_and_exit_130_promptly(tmp_path, target, extra, expected):
    out = tmp_path / "out"
    args = ["--input", str(_corpus(tmp_path / "in") / "*"), "--output", str(out)]
    run = _Run(*args, *extra)
    # Mid-encode: the first encoder shape is ready (one wave, or the budget sample), or the
    # second wave is under way.
    run.wait_for("wave 2/7" if "--wave-files" in extra else "encoder for [")
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


def _before_beam(tmp_path: Path, *args: str) -> tuple[str, str]:
    """`docbeam run ARGS` in a child Python: (its exit status and whether Beam and JAX were
    imported, its stderr)."""
    code = (
        "import sys; from docbeam.pipeline.cli import main; rc = main(sys.argv[1:]); "
        "print(rc, 'apache_beam' in sys.modules, 'jax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, "run", *args], capture_output=True, text=True, timeout=60)
    return out.stdout.strip(), out.stderr


def _user_folder(folder: Path) -> dict[Path, bytes]:
    """A folder of someone's own files, in folders whose names a docbeam run also uses."""
    files = {
        folder / "documents" / "thesis" / "chapter1.md": b"# my thesis\n",
        folder / "errors" / "notes.txt": b"things that went wrong\n",
        folder / "_cost" / "budget.csv": b"rent,900\n",
        folder / "keep.txt": b"not in a run folder\n",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def test_an_output_docbeam_cannot_use_is_one_line_and_exit_2_before_beam_loads(tmp_path):
    (tmp_path / "a-file.txt").write_text("x")
    old_run = tmp_path / "old-run"  # a run from before the run marker: known by its manifest
    (old_run / "documents").mkdir(parents=True)
    (old_run / "documents" / "w0123456789-00000-of-00001.parquet").write_bytes(b"PAR1")
    (old_run / "_manifest.json").write_text('{"counts": {}, "accounting": {}}')
    _user_folder(tmp_path / "mine")
    notes = str(SAMPLES / "notes.txt")
    cases = [
        ([notes], tmp_path / "a-file.txt" / "out", f"a-file.txt/out: {tmp_path}/a-file.txt is a file, not a folder"),
        ([notes], tmp_path / "a-file.txt", "is a file, not a folder"),
        ([notes], old_run, "already holds a run's outputs (2 files); pass --overwrite"),
        ([notes], tmp_path / "mine", "--output: " + str(tmp_path / "mine") + " is not a docbeam run"),
        ([str(tmp_path / "none-*.jsonl")], tmp_path / "o", f"--input matches no files: {tmp_path}/none-*.jsonl"),
        ([str(tmp_path / "empty")], tmp_path / "o", "--input matches no files"),
    ]
    (tmp_path / "empty").mkdir()
    if Path("/proc/self").exists():
        cases.append(([notes], Path("/proc/x"), "--output /proc/x: cannot write in /proc"))
    for inputs, output, message in cases:
        status, err = _before_beam(tmp_path, "--input", *inputs, "--output", str(output))
        assert status == "2 False False", (output, status, err)
        assert len(err.strip().splitlines()) == 1 and message in err and "Traceback" not in err, (message, err)
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_overwrite_and_resume_never_delete_files_docbeam_did_not_write(tmp_path):
    from docbeam.pipeline.core.flags import UsageError
    from tests.helpers import run_job

    mine = tmp_path / "mine"
    files = _user_folder(mine)
    for flag in ("--overwrite", "--resume"):
        status, err = _before_beam(tmp_path, "--input", str(SAMPLES / "notes.txt"), "--output", str(mine), flag)
        assert status == "2 False False" and f"{flag}: {mine} is not a docbeam run" in err, err
        assert "nothing was deleted" in err and len(err.strip().splitlines()) == 1, err
        # The job checks again (Airflow and the tests call it without the command line's check).
        with pytest.raises(UsageError, match=rf"^{flag}: {re.escape(str(mine))} is not a docbeam run"):
            run_job(SAMPLES / "notes.txt", mine, flag)
        assert {p: p.read_bytes() for p in files} == files, flag
    assert sorted(p.relative_to(mine).as_posix() for p in mine.rglob("*") if p.is_file()) == sorted(
        p.relative_to(mine).as_posix() for p in files
    )


@pytest.mark.slow
def test_output_never_follows_a_link_out_of_it(tmp_path):
    """A run folder that is a link (or a link inside one) is refused before anything is written
    or deleted: --overwrite would delete where it leads, a fresh run write there."""
    from docbeam.pipeline.core.flags import UsageError
    from tests.helpers import run_job

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "part-00000-of-00001.parquet").write_bytes(b"someone's file with a docbeam name")
    out = tmp_path / "out"
    run_job(SAMPLES / "notes.txt", out)
    shutil.rmtree(out / "extractions")
    (out / "extractions").symlink_to(elsewhere, target_is_directory=True)
    status, err = _before_beam(tmp_path, "--input", str(SAMPLES / "notes.txt"), "--output", str(out), "--overwrite")
    assert status == "2 False False" and "extractions is a link (to " in err and "nothing was written or deleted" in err
    with pytest.raises(UsageError, match="extractions is a link"):  # the job checks too (Airflow calls it)
        run_job(SAMPLES / "notes.txt", out, "--overwrite")
    assert [p.name for p in elsewhere.iterdir()] == ["part-00000-of-00001.parquet"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "chunks").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(UsageError, match="chunks is a link"):
        run_job(SAMPLES / "notes.txt", fresh)
    inner = tmp_path / "inner"
    run_job(SAMPLES / "notes.txt", inner)
    (inner / "_cost" / "report.md").unlink()
    (inner / "_cost" / "report.md").symlink_to(elsewhere / "part-00000-of-00001.parquet")
    with pytest.raises(UsageError, match="report.md is a link"):
        run_job(SAMPLES / "notes.txt", inner, "--overwrite")
    assert [p.name for p in elsewhere.iterdir()] == ["part-00000-of-00001.parquet"]


@pytest.mark.slow
def test_overwrite_replaces_docbeam_runs_old_and_new_and_nothing_else(tmp_path):
    import json

    from docbeam.pipeline.core.flags import UsageError
    from tests.helpers import run_job

    out = tmp_path / "run"
    first = run_job(SAMPLES / "notes.txt", out)
    marker = json.loads((out / "_docbeam_run.json").read_text())
    assert first.manifest["run_id"] == marker["run_id"]

    # Someone's file among the run's: --overwrite deletes none of them.
    stray = out / "documents" / "my-notes.parquet"
    stray.write_bytes(b"mine")
    before = sorted(p for p in out.rglob("*") if p.is_file())
    with pytest.raises(UsageError, match=rf"--overwrite: {re.escape(str(stray))} is not a file docbeam writes"):
        run_job(SAMPLES / "notes.txt", out, "--overwrite")
    assert sorted(p for p in out.rglob("*") if p.is_file()) == before
    stray.unlink()

    second = run_job(SAMPLES / "notes.txt", out, "--overwrite")
    assert second.manifest["run_id"] not in (None, first.manifest["run_id"])

    # A run made before the marker is known by its _manifest.json (`make run` overwrites it).
    (out / "_docbeam_run.json").unlink()
    third = run_job(SAMPLES / "notes.txt", out, "--overwrite")
    assert third.manifest["verdict"]["ok"] and third.manifest["run_id"] not in (None, second.manifest["run_id"])


def test_a_killed_write_leaves_a_temporary_file_overwrite_still_accepts():
    from docbeam.pipeline.launch.running.run_folder import owned

    # storage.write_bytes writes `.<name>.<random>.tmp` beside the file, then renames it.
    assert owned("_progress/.w0123456789.json.ab_c12x9.tmp") and owned("._manifest.json.k2j3h4g5.tmp")
    assert owned("_cost/.report.md.abcdefgh.tmp")
    assert not owned("_cost/.budget.csv.abcdefgh.tmp") and not owned("documents/.x.abcdefgh.tmp")


def test_a_folder_holding_only_a_refused_starts_marker_is_an_empty_output(tmp_path):
    """--budget-usd refuses to start after the marker is written: the same command again (a
    higher budget, say) must not be told the folder holds a run."""
    from docbeam.pipeline.launch.running import run_folder

    out = tmp_path / "out"
    out.mkdir()
    run_id = run_folder.mark(str(out))
    assert run_folder.check_output(str(out), overwrite=False, resume=False) == []
    assert run_folder.mark(str(out)) == run_id


def test_the_run_marker_on_gcs(gcs_emulator):
    """A new gs:// run reads a marker that does not exist yet (GCS answers NotFound, not OSError)."""
    from docbeam.pipeline.launch.running import run_folder

    out = f"gs://{gcs_emulator.create_bucket()}/runs/new"
    assert not run_folder.is_run(out) and run_folder.run_id(out) is None
    run_id = run_folder.mark(out)
    assert run_folder.is_run(out) and run_folder.run_id(out) == run_id
    assert run_folder.check_output(out, overwrite=False, resume=False) == []


@pytest.mark.slow
@pytest.mark.parametrize("after_s", [1.0, 2.5])
def test_ctrl_c_in_the_first_seconds_is_not_lost(tmp_path, after_s):
    """While JAX imports, a KeyboardInterrupt can land in a garbage-collector callback, which
    swallows it: the run then went on to the end (a new user's Ctrl-C at 2-3 s, 3 of 3 tries)."""
    out = tmp_path / "out"
    run = _Run("--input", str(_corpus(tmp_path / "in") / "*"), "--output", str(out))
    time.sleep(after_s)
    sent = time.monotonic()
    run.proc.send_signal(signal.SIGINT)
    rc, err = run.finish(timeout=120)
    assert rc == 130, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("docbeam run: interrupted"), err
    assert time.monotonic() - sent < 4 * INTERRUPT_BOUND_S, err  # the first wave does not start
    assert not (out / "_manifest.json").exists()


def test_a_folder_with_someone_elses_manifest_is_told_so(tmp_path):
    from docbeam.pipeline.core.flags import UsageError
    from docbeam.pipeline.launch.running import run_folder

    (tmp_path / "documents").mkdir()
    (tmp_path / "documents" / "part-00000-of-00001.parquet").write_bytes(b"theirs")
    (tmp_path / "_manifest.json").write_text('{"name": "some other tool"}')
    with pytest.raises(UsageError, match=r"not a docbeam run \(no _docbeam_run.json, and its _manifest.json is not"):
        run_folder.check_output(str(tmp_path), overwrite=True, resume=False)
