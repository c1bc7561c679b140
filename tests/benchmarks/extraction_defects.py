"""Defects in what `--extract keyphrases,summary,labels,entities` gives on real technical
documents of this machine (issue 36's measures), counted the same way before and after a change.

    python -m tests.benchmarks.extraction_defects [--docbeam EXE] [--per-kind N] [--json FILE] [--show]

The files are whatever this machine has (tests/machine_files.py picks them, spread over
packages; some for a property the measures look at: man pages whose footer has a version
before its date or that print URLs in angle brackets, HTML with navigation markup, Markdown
with front matter), N of each kind: man pages rendered to text as a reader saves them (`MANWIDTH=80 man
-l PAGE | col -b`: English, and translated ones under /usr/share/man/LANG), HTML manuals and
PDFs under /usr/share/doc, licences under /usr/share/common-licenses, 2N Markdown files under
/usr/share/doc and in this environment's site-packages. `--docbeam EXE` runs another build's `docbeam` on the same files
(a checkout of main: `--docbeam /work/main/.venv/bin/docbeam`), so both counts come from one
set of inputs.

Counted, each by a check written apart from the code under test:
- values with layout: a keyphrase, summary or entity value holding a run of whitespace, a line
  break or tab, or a word hyphenated at a line end (`un‐ less`, `SIM‐\\nPLE`);
- summaries that are not prose: navigation (`Next: ...`, `Previous: ...`), synopsis or usage
  lines (`cp [OPTION]... SOURCE`, `usage: zstd [args]`), code (a C signature `int f(void *p);`,
  brackets and operators);
- dates made of a version number: an `entity:date` whose first digit follows `digit.`;
- URLs ending in a closing bracket the URL does not open (`...grep⟩`, `...)`);
- Markdown: documents, those with sections, those whose front matter reached `metadata`, and
  chunks with a section.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq

from tests import machine_files

EXTRACT = "keyphrases,summary,labels,entities"
PDF = ("/usr/share/doc/**/*.pdf",)
NAVIGATION_MARKUP = re.compile(r"""rel=["']?(?:next|prev)|role=["']navigation""")
FRONT_MATTER = re.compile(r"---[ \t]*\r?\n")
VERSIONED_FOOTER = re.compile(r'^\.TH\s+\S+\s+\S+\s+"[^"]*\d{4}"\s+"[^"]*\d+\.\d+"', re.MULTILINE)
URL_MACRO = re.compile(r"^\.UR\s", re.MULTILINE)

LAYOUT_VALUE = re.compile(r"\s\s|[\n\r\t\f]|\w[-\u2010\u00ad]\s+\w")
NAVIGATION = re.compile(r"\b(?:Next|Previous|Prev|Up)\s*:\s", re.IGNORECASE)
SYNOPSIS = re.compile(r"\[-{1,2}\w[^\]]*\]|\[[A-Z_]{2,}\]\.\.\.|\b[A-Z_]{3,}\.\.\.|(?i:^\s*usage\s*:)|\]\.\.\.")
# a parameter list with a pointer (`char * der`, `ffi_cif *cif`) or an underscored type, or `);`
C_SIGNATURE = re.compile(r"\w+\s*\([^()]*\w(?:\s+\*+\s*|\s*\*+\s+)\w|\w+\s*\(\s*\w*_\w*\s+\w+\s*[,)]|\)\s*;\s*$")
CODE = re.compile(r"[{};]\s*$|==|!=|->|#include|^\s*(?:import |def |class |return )")
INLINE_CODE = re.compile(r"`[^`]*`")  # Markdown's inline code: prose may name code


def gather(folder: Path, per_kind: int) -> dict[str, list[str]]:
    """Writes the picked files into `folder`; kind -> the names given to docbeam. Half of the
    HTML pages and Markdown files are picked for what the measures look at: pages with
    navigation markup (`rel="next"`, `role="navigation"`), Markdown with front matter."""
    kinds: dict[str, list[str]] = {k: [] for k in ("man", "html", "pdf", "licence", "markdown")}

    def add(kind: str, name: str, text: str | bytes) -> None:
        name = re.sub(r"[^\w.+-]", "_", name).strip("_")
        if name not in kinds[kind]:
            (folder / name).write_bytes(text.encode() if isinstance(text, str) else text)
            kinds[kind].append(name)

    pages = machine_files.find_man_pages(per_kind) + machine_files.find_man_pages(
        per_kind // 2 or 1, machine_files.TRANSLATED_MAN_PAGES
    )
    # and pages with what the date and URL measures look at: a footer with a version before
    # its date (`.TH CP 1 "September 2022" "GNU coreutils 9.1"`), URLs in angle brackets (.UR)
    pages += machine_files.find_man_pages(per_kind // 4 or 1, wanted=VERSIONED_FOOTER.search)
    pages += machine_files.find_man_pages(per_kind // 4 or 1, wanted=URL_MACRO.search)
    for page, text in pages:
        add("man", "man-" + "-".join(Path(page).parts[-3:]).removesuffix(".gz") + ".txt", text)
    navigated = machine_files.find_files(machine_files.HTML, per_kind // 2, 2000, NAVIGATION_MARKUP.search)
    for p in navigated + machine_files.find_files(machine_files.HTML, per_kind, 2000):
        if len(kinds["html"]) < per_kind:
            add("html", "html-" + p, Path(p).read_bytes())
    for p in machine_files.find_files(PDF, max(2, per_kind // 4), 1000):
        add("pdf", "pdf-" + Path(p).name, Path(p).read_bytes())
    for p in machine_files.find_files(machine_files.LICENCES, per_kind):
        add("licence", f"licence-{Path(p).name}.txt", Path(p).read_bytes())
    fronted = machine_files.find_files(machine_files.MARKDOWN, per_kind // 2, 300, FRONT_MATTER.match)
    for p in fronted + machine_files.find_files(machine_files.MARKDOWN, per_kind * 2):
        if len(kinds["markdown"]) < per_kind * 2:
            add("markdown", "md-" + p.removesuffix(".gz"), machine_files.read(p))
    return kinds


def run(docbeam: str, inputs: Path, output: Path) -> float:
    start = time.perf_counter()
    cmd = [docbeam, "run", "--input", str(inputs), "--output", str(output), "--extract", EXTRACT]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
    if done.returncode != 0:
        raise SystemExit(f"docbeam failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def read(output: Path, name: str) -> list[dict]:
    files = sorted((output / name).glob("*.parquet"))
    return [r for f in files for r in pq.read_table(f).to_pylist()]


def kind_of(doc_id: str, kinds: dict[str, list[str]]) -> str:
    base = Path(doc_id).name
    return next((k for k, names in kinds.items() if base in names), "other")


def unbalanced_close(url: str) -> bool:
    last = url[-1:]
    if not last or unicodedata.category(last) != "Pe":
        return False
    opened = sum(unicodedata.category(c) == "Ps" for c in url)
    closed = sum(unicodedata.category(c) == "Pe" for c in url)
    return closed > opened


def defects(output: Path, kinds: dict[str, list[str]]) -> tuple[dict, dict]:
    docs = {d["doc_id"]: d for d in read(output, "documents")}
    rows = read(output, "extractions")
    chunks = read(output, "chunks")
    found: dict[str, list] = {
        "layout_values": [],
        "navigation_summaries": [],
        "synopsis_summaries": [],
        "code_summaries": [],
        "version_dates": [],
        "bracket_urls": [],
    }
    for r in rows:
        value, kind = r["value"], r["kind"]
        where = (kind_of(r["doc_id"], kinds), kind, value)
        if kind != "label" and LAYOUT_VALUE.search(value):
            found["layout_values"].append(where)
        if kind == "summary":
            if NAVIGATION.search(value):
                found["navigation_summaries"].append(where)
            if SYNOPSIS.search(value):
                found["synopsis_summaries"].append(where)
            if C_SIGNATURE.search(value) or CODE.search(INLINE_CODE.sub("code", value)):
                found["code_summaries"].append(where)
        if kind == "entity:date" and r["start_char"] is not None:
            text = docs[r["doc_id"]]["text"] or ""
            if re.search(r"\d[.,]\Z", text[max(0, r["start_char"] - 2) : r["start_char"]]):
                found["version_dates"].append(where)
        if kind == "entity:url" and unbalanced_close(value):
            found["bracket_urls"].append(where)
    md = [d for d in docs.values() if kind_of(d["doc_id"], kinds) == "markdown"]
    md_ids = {d["doc_id"] for d in md}
    md_chunks = [c for c in chunks if c["doc_id"] in md_ids]
    front = {d["doc_id"] for d in md if (docs[d["doc_id"]]["text"] or "").startswith("---\n")}
    markdown = {
        "documents": len(md),
        "with_sections": len({c["doc_id"] for c in md_chunks if c.get("section")}),
        "chunks": len(md_chunks),
        "chunks_with_section": sum(1 for c in md_chunks if c.get("section")),
        "with_metadata": sum(1 for d in md if d.get("metadata")),
        "front_matter_left_in_text": len(front),
    }
    totals = {
        "documents": len(docs),
        "by_kind": {k: sum(1 for d in docs if kind_of(d, kinds) == k) for k in kinds},
        "values": sum(1 for r in rows if r["kind"] != "label"),
        "summaries": sum(1 for r in rows if r["kind"] == "summary"),
        "dates": sum(1 for r in rows if r["kind"] == "entity:date"),
        "urls": sum(1 for r in rows if r["kind"] == "entity:url"),
    }
    return {"totals": totals, "counts": {k: len(v) for k, v in found.items()}, "markdown": markdown}, found


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docbeam", default=str(Path(sys.executable).with_name("docbeam")))
    ap.add_argument("--per-kind", type=int, default=10)
    ap.add_argument("--json")
    ap.add_argument("--show", action="store_true", help="print every defect found")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        inputs, output = Path(tmp) / "in", Path(tmp) / "out"
        inputs.mkdir()
        kinds = gather(inputs, args.per_kind)
        seconds = run(args.docbeam, inputs, output)
        result, found = defects(output, kinds)
    result |= {"docbeam": args.docbeam, "wall_s": round(seconds, 1), "files": kinds}
    print(json.dumps({k: result[k] for k in ("docbeam", "wall_s", "totals", "counts", "markdown")}, indent=1))
    if args.show:
        for what, items in found.items():
            for item in items:
                print(what, json.dumps(item, ensure_ascii=False)[:300])
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
