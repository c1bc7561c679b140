"""How close docbeam's PDF text comes to the text a reader keeps, and how many chunks are
mostly layout (issue 24's metrics, fixed before the work).

    python -m tests.benchmarks.pdf_text_quality [--against /work/main] [--json FILE]

- agreement: on PDFs fpdf2 makes from known text (tests/ingest/files.py report_pdf: a
  running header, 'Page N of M' footers, a contents page with dot leaders, long words
  hyphenated at line ends), the similarity of docbeam's text to the known text: NFKC,
  whitespace collapsed, difflib's ratio on characters (1.0: the same text);
- layout share: the share of chunks (the default model's tokenizer and windows) with more
  than 40% of their characters on layout lines. The layout lines are labelled by hand: the
  generator's own list for the made PDFs, and for the two real manuals found under
  /usr/share/doc (libtasn1's, 36 pages; shared-mime-info's spec, 17 pages) the labels below,
  written from reading them, never from the heuristic under test.

`--against DIR` runs the same measurement on DIR's docbeam code (a checkout of main) in a
child process and prints both: before and after, on the same files.
"""

import argparse
import difflib
import io
import json
import os
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

LAYOUT_MOSTLY = 0.4
MADE = {f"survey-{n}p": n for n in (3, 5, 7)}  # report_pdf(paragraphs=n): 7 pages each, more text per page
LIBTASN1 = Path("/usr/share/doc/libtasn1-doc/libtasn1.pdf")
MIME = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")


def normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def agreement(text: str, truth: str) -> float:
    return difflib.SequenceMatcher(None, normal(text), normal(truth), autojunk=False).ratio()


def libtasn1_labels(page: int, line: str) -> bool:
    """libtasn1.pdf, 36 pages, read by hand: page 3 (index 2) holds the contents (heading
    'Table of Contents', its page number 'i' above it), pages 35-36 the two indexes (their
    page number, their heading, then entries and letter groups); from page 4 (index 3) on every
    page starts with its printed number (index - 2), alone on a chapter's first page, else
    after the chapter's running title."""
    heading = {2: "Table of Contents", 34: "Concept Index", 35: "Function and Data Index"}
    if page in heading:
        return line != heading[page]  # entries, letter groups and the page number
    if page < 3:
        return False
    n = page - 2
    running = {
        **dict.fromkeys((5, 6), "Chapter 2: ASN.1 structure handling"),
        **dict.fromkeys((8, 9), "Chapter 3: Utilities"),
        **dict.fromkeys(range(11, 26), "Chapter 4: Function reference"),
        **dict.fromkeys(range(27, 34), "Appendix A: Copying Information"),
    }
    return line == (f"{running[page]} {n}" if page in running else str(n))


def mime_labels(page: int, line: str) -> bool:
    """shared-mime-info-spec.pdf, 17 pages, read by hand: the title above every page, the
    page's number (index + 1) alone below it."""
    return line in ("Shared MIME-info Database", str(page + 1))


def layout_spans(text: str, pages: tuple[int, ...], is_layout) -> list[tuple[int, int]]:
    """(start, end) of each line of `text` that `is_layout(page index, line)` labels layout."""
    spans, at = [], 0
    bounds = [*pages[1:], len(text) + 1]
    for line in text.split("\n"):
        page = next(i for i, end in enumerate(bounds) if at < end or i == len(bounds) - 1)
        if line.strip() and is_layout(page, " ".join(line.split())):
            spans.append((at, at + len(line)))
        at += len(line) + 1
    return spans


def layout_mostly(chunks: list[tuple[int, int]], spans: list[tuple[int, int]]) -> int:
    """How many chunks have more than LAYOUT_MOSTLY of their characters on layout lines."""
    count = 0
    for start, end in chunks:
        on = sum(max(0, min(end, b) - max(start, a)) for a, b in spans)
        count += on > LAYOUT_MOSTLY * (end - start)
    return count


def measure() -> dict:
    """Every figure for the docbeam code importable here."""
    import docbeam.pipeline.ingest.formats.pdf as code
    from docbeam.model.checkpoint import default_checkpoint_dir, describe_checkpoint
    from docbeam.model.tokenizer import load_tokenizer
    from docbeam.pipeline.ingest.chunking import Frame, Windowing, chunk_documents
    from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
    from docbeam.pipeline.ingest.sandbox import Sandbox
    from tests.ingest import files

    ckpt = describe_checkpoint(default_checkpoint_dir())
    tokenizer, _ = load_tokenizer(ckpt.path)
    frame = Frame.of(ckpt)
    win = Windowing.of(256, specials=frame.count)
    corpus = []  # (name, data, known text or None, is_layout)
    for name, paragraphs in MADE.items():
        known = files.report_pdf(paragraphs)
        labels = {" ".join(line.split()) for line in known.layout}
        corpus.append((name, known.data, known.text, lambda _, line, labels=labels: line in labels))
    for path, labels in ((LIBTASN1, libtasn1_labels), (MIME, mime_labels)):
        if path.exists():
            corpus.append((path.name, path.read_bytes(), None, labels))
    out = {"code": str(Path(code.__file__).resolve().parents[3]), "documents": {}}
    with Sandbox(timeout_s=120) as sandbox:
        for name, data, truth, is_layout in corpus:
            (doc,) = parse_file(f"/in/{name}.pdf", lambda data=data: io.BytesIO(data), ParseConfig(), sandbox=sandbox)
            ((_, chunks),) = chunk_documents([doc], tokenizer, frame, win)
            spans = [(c.start_char, c.end_char) for c in chunks]
            layout = layout_spans(doc.text, doc.provenance.pages, is_layout)
            out["documents"][name] = {
                "agreement": None if truth is None else round(agreement(doc.text, truth), 4),
                "chunks": len(spans),
                "layout_mostly": layout_mostly(spans, layout),
                "layout_lines": len(layout),
                "soft_hyphen_marks": doc.text.count("\ufffe") + doc.text.count("\u00ad"),
            }
    return out


def against(checkout: Path) -> dict:
    """measure() on another checkout's docbeam (tests from this one), in a child process."""
    with tempfile.TemporaryDirectory() as ns:
        (Path(ns) / "docbeam").mkdir()
        for part in ("pipeline", "model", "kernels"):
            (Path(ns) / "docbeam" / part).symlink_to(checkout.resolve() / part)
        here = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONPATH": f"{ns}{os.pathsep}{here}"}
        cmd = [sys.executable, "-m", "tests.benchmarks.pdf_text_quality", "--json", "-"]
        return json.loads(subprocess.run(cmd, env=env, cwd=here, check=True, capture_output=True, text=True).stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", type=Path, help="a docbeam checkout to measure too (before)")
    ap.add_argument("--json", help="write the figures as JSON to this file ('-': stdout, nothing else)")
    args = ap.parse_args()
    runs = {"before": against(args.against)} if args.against else {}
    runs["after" if args.against else "this"] = measure()
    if args.json == "-":
        print(json.dumps(runs.get("this") or runs))
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=2))
    for label, run in runs.items():
        print(f"{label}: {run['code']}")
        head = f"{'agreement':>10}{'chunks':>8}{'layout-mostly':>14}{'layout lines':>13}{'U+FFFE/AD':>10}"
        print(f"  {'document':<28}{head}")
        total = mostly = 0
        for name, d in run["documents"].items():
            agree = "-" if d["agreement"] is None else f"{d['agreement']:.4f}"
            print(
                f"  {name:<28}{agree:>10}{d['chunks']:>8}{d['layout_mostly']:>14}{d['layout_lines']:>13}"
                f"{d['soft_hyphen_marks']:>10}"
            )
            total, mostly = total + d["chunks"], mostly + d["layout_mostly"]
        print(f"  layout-mostly chunks: {mostly}/{total} ({mostly / max(total, 1):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
