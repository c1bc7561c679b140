"""PDF page text as a reader keeps it: words hyphenated at line ends made whole again, and
layout lines dropped (running headers and footers, page numbers, contents and index leaders).
Works page by page, so the offsets of the joined text (pages, sections) are those of the
cleaned text. Pure: no Beam, no PDFium here."""

import math
import re
from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass

from docbeam.pipeline.ingest.hyphens import join_hyphens, words_of

MIN_PAGES = 4  # running headers and footers are looked for on PDFs of 4 pages or more only
EDGE = 2  # non-blank lines at the top and at the bottom of a page where they may stand
MAX_RUNNING = 100  # characters: a running header or footer is one short line

# What a leader leads to. Anchored by lookbehinds to a run's start, so a long run of digits is
# tried once, not once per digit (unanchored, '....' + 40,000 digits + 'x' took 10 s).
_PAGE_REF = re.compile(r"(?:(?<!\d)\d+|(?<![ivxlcdm])[ivxlcdm]+)\Z", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
_PAGE_ONLY = re.compile(r"(?:page|p\.|of|#|[^\w#])*", re.IGNORECASE)  # "#", "- # -", "Page # of #"
_ROMAN = re.compile(r"M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})", re.IGNORECASE)
# where a page number stands in a line: first or last, brackets aside (an RFC's `[Page 3]`)
_EDGE_NUMBER = re.compile(r"\A[^\w\s]*(\d+)|(\d+)[^\w\s]*\Z")


@dataclass(frozen=True)
class CleanPages:
    pages: list[str]
    running: int  # lines dropped as running headers, footers and page numbers
    leaders: int  # lines dropped as dot leaders (contents, indexes)


def clean_pages(pages: list[str], keep: Collection[tuple[int, str]] = ()) -> CleanPages:
    """Every page's text without its layout lines and with its hyphenated words whole.
    `keep`: (page index, line) never dropped (the bookmark titles, which locate sections)."""
    lines = [page.split("\n") for page in pages]
    kept = {(i, " ".join(title.split())) for i, title in keep}
    running = running_lines(lines) if len(pages) >= MIN_PAGES else set()
    out, n_running, n_leaders = [], 0, 0
    for i, page in enumerate(lines):
        body = []
        for j, line in enumerate(page):
            if kept and (i, " ".join(line.split())) in kept:
                body.append(line)
            elif (i, j) in running:
                n_running += 1
            elif is_leader(line):
                n_leaders += 1
            else:
                body.append(line)
        out.append("\n".join(body))
    seen = words_of(out)
    return CleanPages([join_hyphens(page, seen) for page in out], n_running, n_leaders)


def is_leader(line: str) -> bool:
    """`Introduction . . . . . 22`, `Index.......iv`, `.....`: a contents or index line: four
    dots or more (spaced or not), or two ellipses, running to a page reference that ends the
    line, or nothing but dots. Dots inside text ('a..b', 'etc...') lead nowhere."""
    if line.count(".") < 4 and line.count("…") < 2:  # most lines: no regex run
        return False
    line = line.strip()
    ref = _PAGE_REF.search(line)
    before = line[: ref.start()] if ref else line
    if ref is None and before.strip(". \t…"):
        return False
    dots = before[len(before.rstrip(". \t…")) :]  # the run of dots ending `before`
    return dots.count(".") >= 4 or dots.count("…") >= 2


def running_lines(pages: list[list[str]]) -> set[tuple[int, int]]:
    """(page index, line index) of the running headers and footers: short lines at a page's
    top or bottom that repeat with the same text on most pages (a title), or that read like a
    page number ('14', 'Page 3 of 9', '- 3 -', 'iv') on most pages, or that carry the page's
    own number at their start or end (brackets aside: an RFC's '[Page 3]'), counting on from
    page to page on most pages ('Chapter 4: Function reference 12' above a manual's pages). A
    page keeps its lines where they would all go (its content, not its frame), and pages all
    alike are content (a duplicated page)."""
    if len({" ".join(" ".join(page).split()) for page in pages}) == 1:
        return set()
    edges = [_edge_lines(page) for page in pages]
    most = max(3, math.ceil(len(pages) / 2))
    on_pages: dict[str, set[int]] = defaultdict(set)
    for i, edge in enumerate(edges):
        for _, text, shape in edge:
            on_pages[text].add(i)
            if shape != text:
                on_pages[shape].add(i)
    found = set()
    for i, edge in enumerate(edges):
        for j, text, shape in edge:
            if len(on_pages[text]) >= most or (_page_number_like(shape) and len(on_pages[shape]) >= most):
                found.add((i, j))
    # Page numbers: the same shape on two pages at least, or nothing but the number (so a
    # chapter title 'Chapter 3: Fisheries' on page 3 is no page number), whose number, first
    # or last in the line, is the page's index plus an offset (the front matter's pages)
    # shared by most pages.
    numbered: dict[int, set[tuple[int, int]]] = defaultdict(set)
    for i, edge in enumerate(edges):
        for j, text, shape in edge:
            if "#" in shape and (len(on_pages[shape]) >= 2 or _PAGE_ONLY.fullmatch(shape)):
                for first, last in _EDGE_NUMBER.findall(text):
                    numbered[int(first or last) - i].add((i, j))
    if numbered:
        lines = max(numbered.values(), key=lambda at: len({i for i, _ in at}))
        if len({i for i, _ in lines}) >= most:
            found |= lines
    # never a page's only lines: a line is running where the page keeps a body besides it
    for i, page in enumerate(pages):
        filled = {j for j, line in enumerate(page) if line.strip()}
        if filled and filled <= {j for k, j in found if k == i}:
            found -= {(i, j) for j in filled}
    return found


def _page_number_like(shape: str) -> bool:
    return bool(_PAGE_ONLY.fullmatch(shape)) and "#" in shape


def _edge_lines(page: list[str]) -> list[tuple[int, str, str]]:
    """(index, text, shape) of the first and last EDGE non-blank short lines: the text with
    its whitespace collapsed; the shape with every run of digits, or a roman numeral standing
    alone, read as '#' (the only place digits do not count)."""
    filled = [j for j, line in enumerate(page) if line.strip()]
    at = sorted(set(filled[:EDGE] + filled[-EDGE:]))
    out = []
    for j in at:
        text = " ".join(page[j].split())
        if len(text) <= MAX_RUNNING:
            shape = "#" if _ROMAN.fullmatch(text.strip("-. ")) and text.strip("-. ") else _DIGITS.sub("#", text)
            out.append((j, text, shape))
    return out
