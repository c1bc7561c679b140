"""Facts are defined once: stage names only through the Stage enum, flag defaults only in their
flag definitions (help texts and the README's flag table take them from there)."""

import ast
import re
from pathlib import Path

import pytest

from docbeam.pipeline.core import flags
from docbeam.pipeline.core.stages import EXTRACT_PREFIX, Stage

REPO = Path(__file__).resolve().parents[1]
STAGE_NAMES = {s.value for s in Stage}


def product_files() -> list[Path]:
    return sorted(p for d in ("pipeline", "model", "kernels") for p in (REPO / d).rglob("*.py"))


def stage_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """String literals that name a stage where a stage is meant: a key read from (or written to) a
    mapping, a dict key, compared with a name, or assigned to a *STAGE* name."""
    found = []
    for node in ast.walk(tree):
        keys: list[ast.AST] = []
        if isinstance(node, ast.Subscript):
            keys = [node.slice]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            keys = node.args[:1]
        elif isinstance(node, ast.Dict):
            keys = [k for k in node.keys if k is not None]
        elif isinstance(node, ast.Compare):
            keys = [node.left, *node.comparators]
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and "STAGE" in t.id.upper() for t in node.targets
        ):
            keys = [node.value]
        for k in keys:
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                if k.value in STAGE_NAMES or k.value.startswith(EXTRACT_PREFIX):
                    found.append((k.lineno, k.value))
    return found


# Literals equal to a stage name that mean something else: (file, literal) -> what it means.
NOT_STAGES = {
    ("pipeline/graph/assemble.py", "chunk"): "a Segment's kind (records.Segment.kind)",
    ("pipeline/launch/running/job.py", "sink"): "the --sink option's dest",
    ("pipeline/launch/after_run/sink_sync.py", "sink"): "a _sink_errors/ line's field",
    # the --reuse section of the manifest and of the cost report
    ("pipeline/cost/report.py", "reuse"): "the report's reuse section",
    ("pipeline/launch/after_run/latest.py", "reuse"): "the --reuse flag's dest",
    ("pipeline/launch/display/console.py", "reuse"): "the manifest's and report's reuse sections",
    ("pipeline/launch/running/job.py", "reuse"): "the manifest's reuse section",
}


def test_no_stage_name_is_written_as_a_string_outside_the_enum():
    restated = []
    for path in product_files():
        rel = path.relative_to(REPO).as_posix()
        if rel == "pipeline/core/stages.py":
            continue
        for line, value in stage_literals(ast.parse(path.read_text())):
            if (rel, value) not in NOT_STAGES:
                restated.append(f"{rel}:{line}: {value!r} (use Stage / extract_stage)")
    assert not restated, "\n".join(restated)


def test_the_stage_checker_sees_a_restated_stage():
    src = 'STAGE = "parse"\nenc = totals["encode"]\nm = t.get("match", {})\nnames = {"write": "writing"}\n'
    assert [v for _, v in stage_literals(ast.parse(src))] == ["parse", "encode", "match", "write"]


DEFAULT_IN_HELP = re.compile(r"default[s]? (?:is )?[0-9]")


def help_literals(path: Path) -> list[tuple[int, str]]:
    """The literal text of every help= and description= argument (f-string pieces included)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.keyword) and node.arg in ("help", "description"):
            for part in ast.walk(node.value):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    out.append((part.lineno, part.value))
    return out


@pytest.mark.parametrize("path", ["pipeline/core/flags.py", "pipeline/cli.py"])
def test_help_texts_take_defaults_from_the_definition(path):
    """A number after "default" in a help text is a copy that drifts: help says %(default)s, or
    interpolates the constant the flag's default= uses."""
    copies = [f"{path}:{line}: {text!r}" for line, text in help_literals(REPO / path) if DEFAULT_IN_HELP.search(text)]
    big_numbers = [
        f"{path}:{line}: {text!r}"
        for line, text in help_literals(REPO / path)
        for fact in (flags.INDEX_FROM_ROWS, flags.TOKENS_PER_BATCH, flags.CPU_TOKENS_PER_BATCH)
        if re.search(rf"\b({fact}|{fact:,})\b", text)
    ]
    assert not copies + big_numbers, "\n".join(copies + big_numbers)


def shown(value) -> set[str]:
    """How a default may be written in the README: 5000 or 5,000; 64 MiB; 120 for 120.0."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return {str(value), f"{value:,}", flags.size(value)}
    return {str(value)}


def readme_flag_rows() -> list[tuple[list[str], str]]:
    text = (REPO / "README.md").read_text()
    table = text.split("| flag | default | what |", 1)[1].split("\n\n", 1)[0]
    rows = []
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        names = re.findall(r"`(--[a-z0-9-]+)", cells[0])
        rows.append((names, cells[1]))
    return rows


def test_the_readme_flag_table_states_each_default_as_defined():
    parser = flags.job_parser("docbeam")
    by_flag = {o: a for a in parser._actions for o in a.option_strings}
    derived = {
        "--stride": [flags.STRIDE_TOKENS],
        "--batch-rows": [flags.CPU_TOKENS_PER_BATCH, flags.TOKENS_PER_BATCH],
    }
    wrong, checked = [], 0
    for names, cell in readme_flag_rows():
        for name in names:
            assert name in by_flag, f"the README's flag table names {name}, which `docbeam run` does not have"
            values = derived.get(name) or [by_flag[name].default]
            for value in values:
                forms = shown(value) if value not in (None, "") else set()
                if forms:
                    checked += 1
                    if not any(f in cell for f in forms):
                        wrong.append(f"{name}: the README says {cell!r}, the flag's default is {value!r}")
    assert not wrong, "\n".join(wrong)
    assert checked >= 15  # the table was found and read
