"""The `docbeam` command as users run it: the installed console script, in a subprocess."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from docbeam.kernels import api as kernels
from tests.helpers import REPO

DOCBEAM = shutil.which("docbeam", path=str(Path(sys.executable).parent)) or "docbeam"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [DOCBEAM, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"JAX_PLATFORMS": "cpu", "PATH": str(Path(sys.executable).parent)},
    )


def test_help_lists_the_commands_and_every_kernel():
    top = cli("--help")
    assert top.returncode == 0 and all(c in top.stdout for c in ("run", "submit", "estimate", "report", "kernels"))
    run = cli("run", "--help")
    assert run.returncode == 0 and "--label-file" in run.stdout
    for name in kernels.names():
        assert name in run.stdout


def test_kernels_command_explains_the_choice():
    out = cli("kernels")
    assert out.returncode == 0 and "auto -> xla_fused: CPU" in out.stdout and "interpret mode" in out.stdout


@pytest.mark.parametrize("accelerator", ["tpu-v5e", "l4"])
def test_submit_dry_run_prints_resolved_options(accelerator):
    out = cli("submit", "--accelerator", accelerator, "--dry-run", "--input", "gs://b/in/*", "--output", "gs://b/out")
    assert out.returncode == 0
    resolved = json.loads(out.stdout)
    assert resolved["pipeline_options"]["runner"] == "DataflowRunner"
    assert resolved["hardware"] == f"{accelerator}:1" and "--hardware=" + resolved["hardware"] in resolved["argv"]
    assert set(resolved["missing"]) == {"--project", "--region", "--temp-location", "--sdk-container-image"}


def test_submit_without_the_required_dataflow_flags_refuses():
    out = cli("submit", "--accelerator", "l4", "--input", "gs://b/in/*", "--output", "gs://b/out")
    assert out.returncode == 2 and "needs --project, --region, --temp-location, --sdk-container-image" in out.stderr
