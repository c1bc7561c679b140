"""The format table is whole, and naming functions to the sandbox keeps the parsing libraries
out of the worker: formats.PARSERS holds every module of formats/ and no other, the names
parse.py reads files as are its keys, and the worker that imports every format and parses
through the sandbox never loads PDFium, python-docx, trafilatura or lxml."""

import ast
import subprocess
import sys
from pathlib import Path

from docbeam.pipeline.ingest import formats, parse, sandbox
from tests.ingest import files

REPO = Path(__file__).resolve().parents[2]
FORMATS_DIR = REPO / "pipeline" / "ingest" / "formats"
ADAPTERS = "docbeam.pipeline.ingest.adapters."
# What the sandbox's child loads and the worker must not (warcio: at the first WARC file only).
SANDBOXED_LIBRARIES = ("pypdfium2", "docx", "trafilatura", "lxml")


def test_every_format_module_is_in_the_table_and_nothing_else():
    modules = {p.stem for p in FORMATS_DIR.glob("*.py") if p.stem != "__init__"}
    assert set(formats.PARSERS) == modules
    for name, parser in formats.PARSERS.items():
        assert parser.__module__ == f"docbeam.pipeline.ingest.formats.{name}" and parser.__name__ == "parse"


def test_the_table_reads_every_format_parse_names_and_only_those():
    assert set(formats.PARSERS) == parse.READABLE == set(parse.FORMATS.values())
    assert parse.SIGNED <= parse.READABLE and {fmt for fmt, _ in parse.CONTAINERS} <= parse.READABLE


def test_a_file_of_no_known_format_is_still_rejected_by_name(parse):
    (rej,) = parse("/in/notes.xyz", b"\x00\x01\x02\x03 binary")
    assert rej.error == "unsupported_format" and rej.source == "/in/notes.xyz"


def test_the_worker_never_loads_the_sandboxed_libraries(tmp_path):
    inputs = {"a.pdf": files.multipage_pdf(), "b.docx": files.report_docx(), "c.html": files.news_page().encode()}
    for name, data in inputs.items():
        (tmp_path / name).write_bytes(data)
    code = f"""
import sys
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox
loaded = lambda: sorted(m for m in {SANDBOXED_LIBRARIES + ("warcio",)!r} if m in sys.modules)
print(loaded())
with Sandbox(timeout_s=60) as box:
    for name in {sorted(inputs)!r}:
        path = {str(tmp_path)!r} + "/" + name
        kinds = [type(r).__name__ for r in parse_file(path, lambda: open(path, "rb"), ParseConfig(), sandbox=box)]
        assert kinds == ["Document"], (path, kinds)
print(loaded())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["[]", "[]"]


def _imports_in_functions(path: Path) -> list[tuple[str, ...]]:
    """Each import inside a function: the names of the modules any one of which loads it all
    (`from lxml import etree`: lxml.etree or lxml)."""
    found = []
    for fn in ast.walk(ast.parse(path.read_text())):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    found += [(a.name,) for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found += [(node.module, f"{node.module}.{a.name}") for a in node.names]
    return found


def test_the_child_preloads_what_the_sandboxed_adapters_import_in_their_functions():
    """So that no call's deadline pays for an import (sandbox.PRELOAD)."""
    adapters = [name for name in sandbox.PRELOAD if name.startswith(ADAPTERS)]
    assert adapters, sandbox.PRELOAD
    for name in adapters:
        path = REPO / "pipeline" / "ingest" / "adapters" / f"{name.removeprefix(ADAPTERS)}.py"
        missing = [names[0] for names in _imports_in_functions(path) if not set(names) & set(sandbox.PRELOAD)]
        assert not missing, f"{name} imports {missing} in a function; add them to sandbox.PRELOAD"
