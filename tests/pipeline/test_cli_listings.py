"""`docbeam models` and `docbeam kernels` speak to users: no notes meant for code readers,
and a kernel that is missing says how to install it."""

import os
import subprocess
import sys

from docbeam.model import ARCHITECTURES
from tests.helpers import REPO

CLI = "import sys; from docbeam.pipeline.cli import main; sys.exit(main(sys.argv[1:]))"


def cli(*args: str, before: str = "") -> subprocess.CompletedProcess:
    code = f"{before}; {CLI}" if before else CLI
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=300,
        env={**os.environ, "JAX_PLATFORMS": "cpu"},
    )  # fmt: skip


def test_models_lists_each_architecture_once_in_user_words():
    out = cli("models")
    assert out.returncode == 0, out.stderr
    assert "read top to bottom" not in out.stdout and "must honour" not in out.stdout
    block = out.stdout.split("\n\n")[0].splitlines()[1:]
    modules = list(dict.fromkeys(ARCHITECTURES.values()))
    assert len(block) == len(modules)  # xlm-roberta and roberta share a line
    for line, module in zip(block, modules, strict=True):
        assert line.split()[0].rstrip(",") == module.MODEL_TYPES[0] and line.endswith(module.SUMMARY)


def test_kernels_says_how_to_install_a_missing_optional_kernel():
    # None in sys.modules is how Python itself marks a module as not importable
    out = cli("kernels", before="import sys; sys.modules['tokamax'] = None")
    assert out.returncode == 0, out.stderr
    (line,) = [ln for ln in out.stdout.splitlines() if ln.split()[:1] == ["tokamax"]]
    assert line.split()[1] == "no" and "pip install -e '.[tokamax]'" in line, line
