"""The front door: strict flags, one-line errors before Beam and JAX load, honest exit codes."""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docbeam.pipeline.core.beam_flags import BEAM_FLAGS, BEAM_VERSION
from docbeam.pipeline.core.flags import docbeam_flag_names
from tests.helpers import REPO, SAMPLES, write_jsonl

DOCBEAM = str(Path(sys.executable).parent / "docbeam")


def live_beam_flags() -> dict[str, tuple[str, bool]]:
    import apache_beam
    from apache_beam.options import pipeline_options as po

    def subclasses(c):
        for s in c.__subclasses__():
            yield s
            yield from subclasses(s)

    flags = {}
    for cls in subclasses(po.PipelineOptions):
        if cls.__module__.startswith("apache_beam"):
            parser = argparse.ArgumentParser(add_help=False)
            cls._add_argparse_args(parser)
            for action in parser._actions:
                flags.update({o: (action.dest, action.nargs != 0) for o in action.option_strings})
    assert apache_beam.__version__ == BEAM_VERSION, "regenerate pipeline/core/beam_flags.py for this Beam"
    return flags


def test_the_beam_option_table_is_beams_own_parser():
    live = live_beam_flags()
    table = "\n".join(f"    {k!r}: ({v[0]!r}, {v[1]})," for k, v in sorted(live.items()))
    assert live == BEAM_FLAGS, f"Beam's options changed; the new table for pipeline/core/beam_flags.py:\n{table}"


def test_docbeam_flags_and_beam_options_do_not_clash():
    assert not set(docbeam_flag_names()) & set(BEAM_FLAGS)


def docbeam(*args: str, stdin: str | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    return subprocess.run([DOCBEAM, *args], capture_output=True, text=True, input=stdin, timeout=timeout, env=env)


# (arguments, what the one line on stderr says)
MISTAKES = [
    (
        ["run", "--input", "x", "--output", "o", "--extrct", "keyphrases"],
        "unknown flag --extrct (did you mean --extract?)",
    ),
    (["run", "--input", "x", "--output", "o", "--text_feild", "body"], "did you mean --text_field?"),
    (["run", "--input", "x", "--output", "o", "--extract", "keyphrase,ner"], "unknown extractor 'keyphrase', 'ner'"),
    (["run", "--input", "x"], "the following arguments are required: --output"),
    (["run", "--output", "o"], "the following arguments are required: --input"),
    (["run", "--input", "x", "--output", "o", "--max-seq-len", "abc"], "'abc' is not a whole number"),
    (["run", "--input", "x", "--output", "o", "--attention", "fast"], "invalid choice: 'fast'"),
    (["run", "--input", "x", "--output", "o", "--dtype", "bf16"], "invalid choice: 'bf16'"),
    (["run", "--input", "x", "--output", "o", "--hardware", "l4:3"], "l4 workers come with [1, 2, 4, 8] GPUs, not 3"),
    (["run", "--input", "x", "--output", "o", "--max-rejected", "lots"], "expected a count (10), a percentage"),
    (["run", "--input", "x", "--output", "o", "--keyphrase-ngrams", "2"], "expected MIN,MAX"),
    (["run", "--input", "x", "--output", "o", "stray"], "unexpected argument 'stray'"),
    (["kernels", "--dtype", "bf16"], "invalid choice: 'bf16'"),
    (["kernels", "--seq-len", "0"], "0 is below 1"),
    (["estimate", "--sample", "ten", "--input", "x"], "'ten' is not a whole number"),
    (["submit", "--accelerator", "tpu-v4", "--input", "x", "--output", "o"], "invalid choice: 'tpu-v4'"),
    (["submit", "--accelerator", "l4", "--input", "x", "--output", "o"], "needs --project, --region"),
    (["embed"], "no text to embed"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["rnu"], "did you mean run?"),
]


@pytest.mark.parametrize(("args", "message"), MISTAKES, ids=[" ".join(a)[:40] for a, _ in MISTAKES])
def test_user_mistakes_are_one_line_exit_2_before_beam_and_jax_load(args, message):
    code = (
        "import sys; from docbeam.pipeline.cli import main; rc = main(sys.argv[1:]); "
        "print(rc, 'apache_beam' in sys.modules, 'jax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert out.stdout.split() == ["2", "False", "False"], (out.stdout, out.stderr)
    assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr, out.stderr
    assert out.stderr.startswith("docbeam") and "Traceback" not in out.stderr


def test_mistakes_found_after_loading_are_one_line_too(tmp_path):
    cases = [
        (["run", "--input", str(tmp_path / "none-*.jsonl"), "--output", str(tmp_path / "o")], "matches no files"),
        (
            ["run", "--input", str(SAMPLES / "notes.txt"), "--output", str(tmp_path / "o"), "--model", str(tmp_path)],
            "--model:",
        ),
        (["report", str(tmp_path)], "not found (is"),
    ]
    for args, message in cases:
        out = docbeam(*args)
        assert out.returncode == 2, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr and "Traceback" not in out.stderr


def test_version_help_and_bare_command():
    from importlib.metadata import version

    assert docbeam("--version").stdout.strip() == f"docbeam {version('docbeam')}"
    bare = docbeam()
    assert bare.returncode == 2 and "usage: docbeam <command>" in bare.stderr and "embed" in bare.stderr
    helped = docbeam("run", "--help")
    assert helped.returncode == 0
    usage = helped.stdout.split("\n\n")[0]
    assert "--input GLOB" in usage and "[--input" not in usage and "[--output" not in usage  # shown as required
    assert "--max-rejected" in helped.stdout and "Exit status" in helped.stdout


@pytest.mark.slow
def test_exit_codes_for_rejections(tmp_path, capsys):
    from docbeam.pipeline.run import main

    bad = write_jsonl(tmp_path / "bodies.jsonl", [{"id": i, "body": f"text number {i}"} for i in range(4)])
    assert main(["--input", str(bad), "--output", str(tmp_path / "all")]) == 3
    err = capsys.readouterr().err
    assert "FAILED: every document (4) was rejected" in err
    assert "no 'text' field; the record has fields: body, id (use --text-field body?)" in err
    assert main(["--input", str(bad), "--output", str(tmp_path / "fixed"), "--text-field", "body"]) == 0

    args = ["--input", str(SAMPLES / "articles.jsonl"), "--output", str(tmp_path / "s")]
    assert main([*args, "--max-rejected", "1"]) == 3  # 2 of 40 rejected
    assert "over --max-rejected 1" in capsys.readouterr().err
    assert main([*args, "--max-rejected", "2", "--overwrite"]) == 0
    manifest = json.loads((tmp_path / "s" / "_manifest.json").read_text())
    assert manifest["verdict"] == {"ok": True, "problems": [], "max_rejected": "2"}


@pytest.mark.slow
def test_ctrl_c_stops_in_one_message_and_resume_finishes(tmp_path):
    for i in range(4):
        write_jsonl(tmp_path / f"part-{i}.jsonl", [{"id": f"{i}-{j}", "text": "a document " * 60} for j in range(30)])
    args = ["run", "--input", str(tmp_path / "*.jsonl"), "--output", str(tmp_path / "out"), "--wave-files", "1"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.Popen([DOCBEAM, *args], stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    seen = []
    deadline = time.time() + 240
    while time.time() < deadline:  # interrupt once the first wave is committed
        line = proc.stderr.readline()
        seen.append(line)
        if "wave 2/4" in line:
            break
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, "".join(seen) + rest
    assert "Traceback" not in rest
    # The wave running when Ctrl-C came is committed or not, depending on where Beam was.
    assert re.search(
        rf"interrupted: [123] of 4 waves committed; run the same command with --resume to continue \({tmp_path}/out\)$",
        rest.strip().splitlines()[-1],
    )
    done = docbeam(*args, "--resume")
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "out" / "_manifest.json").read_text())
    assert manifest["accounting"]["holds"] and manifest["counts"]["ok"] == 120


@pytest.mark.slow
def test_progress_is_plain_lines_off_a_terminal_and_a_live_bar_on_one(tmp_path):
    args = ["run", "--input", str(SAMPLES / "articles.jsonl"), "--output"]
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "DOCBEAM_PROGRESS_SECONDS": "1"}
    plain = subprocess.run([DOCBEAM, *args, str(tmp_path / "plain")], capture_output=True, text=True, env=env)
    lines = [line for line in plain.stderr.splitlines() if "progress: " in line]
    assert plain.returncode == 0 and lines, plain.stderr
    assert "40 of 42 documents" in lines[-1] and "document tokens" in lines[-1] and "ETA" in lines[-1]

    import pty

    leader, follower = pty.openpty()  # a terminal, as a person running docbeam has
    proc = subprocess.Popen([DOCBEAM, *args, str(tmp_path / "live")], stdout=follower, stderr=follower, env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        seen += chunk
    assert proc.wait(timeout=60) == 0
    text = seen.decode(errors="replace")
    assert "━" in text and "40/42 docs" in text and "tok/s" in text  # rich's bar, in the user's units
    assert "progress: " not in text
