"""What the docs name exists: every `docbeam.x.y` they write imports (a module, or a name in one;
`docbeam.<stage>` is a metrics namespace), and every repository path they quote (`pipeline/...`)
is there. The CHANGELOG is history: it names what was, then."""

import importlib
import re
from pathlib import Path

import pytest

from docbeam.pipeline.core.stages import Stage

REPO = Path(__file__).resolve().parents[1]
DOCS = ["README.md", "infra/README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md"))]
DOTTED = re.compile(r"\bdocbeam(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
PATH = re.compile(r"`((?:pipeline|model|kernels|infra|tests|samples|docs)/[\w./-]*[\w/])")


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    if parts[1] in STAGES:
        return True
    for i in range(len(parts), 1, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


STAGES = {s.value for s in Stage}


@pytest.mark.parametrize("doc", DOCS)
def test_every_dotted_docbeam_name_imports(doc):
    names = sorted(
        set(DOTTED.findall((REPO / doc).read_text())) - {"docbeam.pipeline.run", "docbeam.pipeline.finalize"}
    )
    missing = [n for n in names if not resolves(n.rstrip("."))]
    assert not missing, f"{doc} names what does not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS)
def test_every_repository_path_exists(doc):
    paths = sorted({p.rstrip(".") for p in PATH.findall((REPO / doc).read_text())})
    missing = [p for p in paths if not (REPO / p).exists() and "*" not in p and "<" not in p]
    assert not missing, f"{doc} names paths the repository lacks: {missing}"
