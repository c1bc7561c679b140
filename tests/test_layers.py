"""The layers of the README's Development section stay true: imports only point down, and nothing imports in a circle.

Every import statement counts, function-local ones included (they are how a cycle hides).
"""

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# folder -> the name it is imported by
PACKAGES = {"kernels": "docbeam.kernels", "model": "docbeam.model", "pipeline": "docbeam.pipeline", "infra": "infra"}
# Lower rank = lower layer. A module may import its own layer or any layer ranked below it.
RANK = {
    "docbeam.kernels": 0,
    "docbeam.model": 1,
    "docbeam.pipeline.core": 2,
    "docbeam.pipeline.io": 3,
    "docbeam.pipeline.ingest": 4,
    "docbeam.pipeline.cost": 4,
    "docbeam.pipeline.stores": 4,  # --sink stores: their clients and ml.rag write configs
    "docbeam.pipeline.encode": 5,
    "docbeam.pipeline.extractors": 5,
    "docbeam.pipeline.graph": 6,
    "docbeam.pipeline.search": 6,  # reads a finished run; encode for queries
    "docbeam.pipeline.launch": 7,
    "docbeam.pipeline": 8,  # entry points: cli, run, finalize
    "infra": 9,
}


def module_name(path: Path) -> str:
    folder, *parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join([PACKAGES[folder], *(parts[:-1] if parts[-1] == "__init__" else parts)])


def modules() -> dict[str, Path]:
    return {module_name(p): p for folder in PACKAGES for p in (REPO / folder).rglob("*.py")}


def imports_of(path: Path, name: str, known: set[str]) -> set[str]:
    """Every repo module `path` imports, at any depth of the file."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else [])
                )
            # `from pkg import mod` imports the module; `from mod import name`, the module.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t:
                found.add(t)
    found.discard(name)
    return found


def layer(name: str) -> str:
    best = ""
    for key in RANK:
        if (name == key or name.startswith(key + ".")) and len(key) > len(best):
            best = key
    return best


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {name: imports_of(path, name, set(mods)) for name, path in mods.items()}


def test_every_module_has_a_layer():
    assert not [m for m in modules() if not layer(m)]


def test_imports_only_point_down():
    upward = [
        f"{src} ({layer(src)}) imports {dst} ({layer(dst)})"
        for src, dsts in graph().items()
        for dst in dsts
        if RANK[layer(dst)] > RANK[layer(src)] or (RANK[layer(dst)] == RANK[layer(src)] and layer(dst) != layer(src))
    ]
    assert not upward, "\n".join(sorted(upward))


def test_no_import_cycles():
    g = graph()
    # Tarjan's strongly connected components: any component of more than one module is a cycle.
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in g:
        if v not in index:
            visit(v)
    assert not comps, f"import cycles: {comps}"


def test_the_checker_sees_function_local_and_upward_imports(tmp_path):
    """The walk must see an import inside a function: that is how today's cycle hid."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from docbeam.pipeline.launch.running import job\n    return job\n")
    assert imports_of(src, "docbeam.pipeline.core.m", set(modules())) == {"docbeam.pipeline.launch.running.job"}
    assert RANK[layer("docbeam.pipeline.launch.running.job")] > RANK[layer("docbeam.pipeline.core.m")]


def test_only_the_pipeline_imports_beam():
    beam_users = defaultdict(list)
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            mod = node.module if isinstance(node, ast.ImportFrom) else None
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [mod or ""]
            if any(n.split(".")[0] == "apache_beam" for n in names):
                beam_users[name.split(".")[1]].append(name)
    assert set(beam_users) <= {"pipeline"}, dict(beam_users)


@pytest.mark.parametrize(
    "module",
    [
        "docbeam.pipeline.core.flags",
        "docbeam.pipeline.core.records",
        "docbeam.pipeline.core.tables",
        "docbeam.pipeline.core.hardware",
        "docbeam.kernels.api",
    ],
)
def test_the_bottom_loads_neither_beam_nor_jax(module):
    code = f"import sys, {module}; print(sorted(m for m in ('jax', 'apache_beam') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"
