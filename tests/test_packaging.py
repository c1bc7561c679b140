"""docbeam installs as one top-level name, `docbeam`, and lives beside transformers and Hugging
Face's `kernels` package in one environment, also when a script runs from a checkout's root."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
FOLDERS = {"pipeline": "docbeam.pipeline", "model": "docbeam.model", "kernels": "docbeam.kernels"}
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())


def folder_packages() -> set[str]:
    """Every folder under the three layer folders that holds modules or data, as an import name."""
    found = set()
    for folder, name in FOLDERS.items():
        for d in [REPO / folder, *(REPO / folder).rglob("*")]:
            if d.is_dir() and d.name != "__pycache__" and any(f.is_file() for f in d.iterdir()):
                found.add(".".join([name, *d.relative_to(REPO / folder).parts]))
    return found


def test_the_package_list_is_the_folders():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert set(setuptools["packages"]) == folder_packages()
    assert setuptools["package-dir"] == {name: folder for folder, name in FOLDERS.items()}


MODULE_PATH = re.compile(r"^(kernels|model|pipeline)\.[a-z_]+")
NOT_MODULES = ("model.safetensors", "model.pt", "model.pth", "model.bin", "model.onnx", "model_int8.onnx")


def test_no_module_path_is_written_without_docbeam():
    """ruff bans bare imports; module paths written as strings (importlib, sandbox targets,
    registries) are checked here, f-strings included."""
    bare = []
    for folder in ("pipeline", "model", "kernels", "infra", "tests"):
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                    text = str(node.values[0].value)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                else:
                    continue
                if (
                    MODULE_PATH.match(text)
                    and not text.startswith(NOT_MODULES)
                    and not text.endswith(".py")
                    and " " not in text
                ):
                    bare.append(f"{path.relative_to(REPO)}:{node.lineno}: {text!r}")
    assert not bare, "\n".join(bare)


def test_kernels_folder_is_not_a_regular_package():
    """A folder without __init__.py loses to an installed regular `kernels` anywhere on the path."""
    assert not (REPO / "kernels" / "__init__.py").exists()


def _env() -> dict:
    return {**os.environ, "JAX_PLATFORMS": "cpu", "HF_HUB_OFFLINE": "1"}


def python(code: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300, env=_env())
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip()


def test_hf_kernels_and_newest_transformers_are_installed_here():
    """The rest of this file proves nothing unless the clash is really present."""
    assert importlib.metadata.distribution("kernels")  # Hugging Face's, pulled by transformers >= 5.25
    assert Version(importlib.metadata.version("transformers")) >= Version("5.25")


@pytest.mark.parametrize("where", ["root", "elsewhere"])
def test_hf_kernels_wins_and_docbeam_works_from_any_folder(where, tmp_path):
    cwd = REPO if where == "root" else tmp_path
    code = (
        "import kernels, transformers.integrations.hub_kernels as hk; "
        "from docbeam.kernels import api; "
        "print(kernels.__file__); print(api.names()[0])"
    )
    hf_file, first = python(code, cwd).splitlines()
    assert "site-packages" in hf_file and not hf_file.startswith(str(REPO / "kernels"))
    assert first == "reference"


def test_a_users_model_and_pipeline_modules_do_not_shadow_docbeam(tmp_path):
    (tmp_path / "model.py").write_text("raise SystemExit('the user model.py was imported')\n")
    (tmp_path / "pipeline.py").write_text("raise SystemExit('the user pipeline.py was imported')\n")
    vec = python("from docbeam.pipeline import embed; v = embed(['a short query']); print(v.shape)", tmp_path)
    assert vec == "(1, 384)"


@pytest.mark.slow
def test_docbeam_commands_beside_transformers(tmp_path):
    docbeam = Path(sys.executable).with_name("docbeam")
    for args in (["kernels"], ["embed", "how do I reset my password?"]):
        out = subprocess.run([docbeam, *args], cwd=REPO, capture_output=True, text=True, timeout=300, env=_env())
        assert out.returncode == 0, out.stderr[-3000:]
    vectors = json.loads(out.stdout)
    assert len(vectors) == 1 and len(vectors[0]) == 384


@pytest.mark.slow
def test_the_wheel_has_one_top_level_name(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("docbeam-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"docbeam"}
    for must in (
        "docbeam/kernels/api.py",
        "docbeam/model/encoder.py",
        "docbeam/pipeline/cli.py",
        "docbeam/pipeline/data/prices.yaml",
        "docbeam/pipeline/data/hardware.yaml",
        "docbeam/pipeline/ingest/formats/pdf.py",
    ):
        assert must in names
    assert "docbeam/kernels/__init__.py" not in names and "docbeam/__init__.py" not in names


def test_a_type_checker_resolves_docbeam_from_the_editable_install(tmp_path):
    """`pip install -e .` installs a tree of links on a static path (infra/packaging/docbeam_build.py),
    not an import hook: mypy, run outside the checkout with no extra search path, sees docbeam's
    own types. The deliberate mistake below is only caught if `docbeam.*` resolved (else: Any)."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from docbeam.kernels import api\n"
        "from docbeam.pipeline.core.flags import UsageError\n"
        "from docbeam.pipeline.stores.base import VectorStore\n"
        "names: int = api.names()\n"
        "reveal_type(UsageError)\n"
        "reveal_type(VectorStore.ensure)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--no-error-summary", str(snippet)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    ).stdout
    assert 'incompatible types in assignment (expression has type "list[str]", variable has type "int")' in out.lower()
    assert "docbeam.pipeline.core.flags.UsageError" in out
    assert (
        "def (self: docbeam.pipeline.stores.base.VectorStore, "
        "dim: int | docbeam.pipeline.core.vector_format.VectorFormat) -> bool" in out
    )
    assert "import-untyped" not in out and "import-not-found" not in out, out


def test_the_version_is_the_newest_changelog_release():
    """One version, in pyproject.toml; the CHANGELOG's newest release section carries it and a date."""
    version = PYPROJECT["project"]["version"]
    releases = re.findall(r"^## (\d+\.\d+\.\d+) - (\d{4}-\d{2}-\d{2})$", (REPO / "CHANGELOG.md").read_text(), re.M)
    assert releases, "the CHANGELOG has no dated release section"
    assert releases[0][0] == version
    assert importlib.metadata.version("docbeam") == version  # the installed package says the same
