"""Plain text's layout lines, dropped as a PDF's are: the header and footer lines of a man page
rendered to text, and the running headers and footers of text paged with form feeds (nroff,
RFCs). Pure: no Beam here.

A man page rendered to text (`man PAGE | col -b`) opens with a header line that names the page
at both ends (`CP(1)  User Commands  CP(1)`, in any language: `CHSH(1)  Commandes utilisateur
CHSH(1)`) and closes with a footer line that ends with the same name (`GNU coreutils 9.1
September 2022  CP(1)`); rendered with page breaks, the two repeat on every page. They are the
page's frame, not its text. Text paged with form feeds (U+000C) has its frame found as a PDF's
is (pdf_clean.running_lines: short lines at a page's edges repeating on most pages).
"""

import re
from dataclasses import dataclass

from docbeam.pipeline.ingest.pdf_clean import MAX_RUNNING, MIN_PAGES, running_lines

# A man page's name and section as its header and footer print them: `CP(1)`, `git-commit(1)`,
# `openssl-asn1parse(1SSL)`, `Tcl_Eval(3tcl)`, `systemd.unit(5)`, `pthread_create(3p)`, `x(n)`
PAGE_NAME = r"[^\s()]+\((?:[0-9][0-9A-Za-z+]*|n|l)\)"
HEADER = re.compile(rf"[ \t]*({PAGE_NAME})(?:[ \t].*[ \t]|[ \t]+)\1[ \t]*")


@dataclass(frozen=True)
class CleanText:
    text: str
    running: int  # lines dropped as headers, footers, page numbers


def clean_text(text: str) -> CleanText:
    """`text` without its layout lines, and how many went. Text without any is returned as is."""
    if "\f" in text:
        text, paged = _paged(text)
    else:
        paged = 0
    text, man = _man_frame(text)
    return CleanText(text, paged + man)


def _man_frame(text: str) -> tuple[str, int]:
    lines = text.split("\n")
    filled = [j for j, line in enumerate(lines) if line.strip() and line.strip() != "\f"]
    if len(filled) < 3 or not (m := HEADER.fullmatch(lines[filled[0]].strip("\f\r"))):
        return text, 0
    name = m.group(1)
    header = " ".join(lines[filled[0]].split())
    last = lines[filled[-1]].strip("\f\r")
    if not last.rstrip().endswith(name) or len(last.strip()) > MAX_RUNNING:
        return text, 0  # a man page closes with its footer: without one, this is no man page
    footer = " ".join(last.split())
    # the header wherever it repeats (a page's top), the footer wherever it repeats (a page's foot)
    drop = {j for j in filled if " ".join(lines[j].strip("\f\r").split()) in (header, footer)}
    if len(drop) >= len(filled):
        return text, 0
    kept = [line for j, line in enumerate(lines) if j not in drop]
    return "\n".join(kept).strip("\n"), len(drop)


def _paged(text: str) -> tuple[str, int]:
    pages = text.split("\f")
    if len(pages) < MIN_PAGES:
        return text, 0
    lines = [page.split("\n") for page in pages]
    found = running_lines(lines)
    if not found:
        return text, 0
    kept = ["\n".join(line for j, line in enumerate(page) if (i, j) not in found) for i, page in enumerate(lines)]
    return "\f".join(kept), len(found)
