"""A web page -> its title and main content (no navigation, headers, footers, cookie
banners), through trafilatura, with the page's headings as sections.

trafilatura keeps some headings and drops others (its recovery pass never takes headings: a
Debian DocBook manual lost every "Chapter N." heading), so the headings are read from the page
itself and the dropped ones put back, each before the text that follows it on the page
(headings.place_headings). Permalink glyphs (Sphinx's `¶`) are removed before extraction.

Runs in the sandbox only. trafilatura and lxml are imported inside the functions: the worker
imports this module to name `extract` to the sandbox, and need not load them (the sandbox's
child preloads them, sandbox.PRELOAD)."""

import logging

from docbeam.pipeline.ingest.headings import LEAD_CHARS, is_permalink, place_headings

logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # it logs every page it finds no text in

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
# HTML's link types that point along a document's reading order or up its tree (`rel="next"`):
# a block made of such links is the page's navigation (texinfo's `Next: ..., Previous: ...`).
NAV_RELS = frozenset({"next", "prev", "previous", "up", "start", "first", "last", "contents", "index"})
BLOCKS = {"p", "div", "td", "tr", "table", "li", "ul", "ol", "header", "footer", "section", "span"}
MAX_NAV_SHARE = 0.5  # a navigation block never holds half of the page's text: that is content
MIN_LINK_SHARE = 0.5  # of a block's letters and digits, those in its links: navigation is mostly links
HIDDEN = {"script", "style", "noscript", "template", "title", "svg", "iframe", "object", "head"}


def extract(markup: str) -> tuple[str, str, list[tuple[int, str]]]:
    """(title, main text, (offset in the main text, heading) in order); empty when there are none."""
    import trafilatura
    from trafilatura.settings import Document
    from trafilatura.utils import load_html

    tree = load_html(markup)
    if tree is None:
        return "", "", []
    title = " ".join((tree.findtext(".//title") or "").split())
    drop_permalinks(tree)
    drop_navigation(tree)
    events = page_events(tree)  # before trafilatura, which rewrites the tree
    # fast: without trafilatura's fallback extractors (readability, jusText): more pages per CPU
    # second at the same F1 on the article-extraction benchmark (tests/benchmarks/parsers.py)
    doc = trafilatura.bare_extraction(
        tree, fast=True, include_comments=False, include_tables=True, with_metadata=False, as_dict=False
    )
    if not isinstance(doc, Document) or not doc.text:
        return title, "", []
    kept = [" ".join("".join(h.itertext()).split()) for h in doc.body.iter("head")]
    text, sections = place_headings(doc.text, with_leads(events, [h for h in kept if h]))
    return title, text, sections


def drop_permalinks(tree) -> None:
    for a in list(tree.iter("a")):
        if is_permalink(a.get("class"), a.get("href"), "".join(a.itertext())) and a.getparent() is not None:
            _remove_keeping_tail(a)


def drop_navigation(tree) -> None:
    """Navigation out of the page before extraction (trafilatura keeps some: a Sphinx sidebar's
    "Table of Contents", texinfo's Next/Previous lines): what HTML marks as navigation, a `<nav>`
    element or an ARIA `role="navigation"` landmark, and the block around links of a reading-
    order type (NAV_RELS) that is mostly links. Never what holds half of the page's text."""
    total = _letters(tree)
    found = [el for el in tree.iter("nav") if el.getparent() is not None]
    found += [el for el in tree.xpath("//*[@role='navigation']") if el.getparent() is not None]
    for a in tree.iter("a"):
        if NAV_RELS.isdisjoint((a.get("rel") or "").lower().split()):
            continue
        block = next((el for el in a.iterancestors() if el.tag in BLOCKS), None)
        if block is not None and block.getparent() is not None:
            links = sum(_letters(link) for link in block.iter("a"))
            if links >= MIN_LINK_SHARE * _letters(block):
                found.append(block)
    chosen = set(found)
    outer = [el for el in dict.fromkeys(found) if not any(a in chosen for a in el.iterancestors())]
    if sum(_letters(el) for el in outer) >= MAX_NAV_SHARE * total:
        return  # that much "navigation" is the page itself (a list of links, a contents page)
    for el in outer:
        _remove_keeping_tail(el)


def _letters(el) -> int:
    return sum(c.isalnum() for c in "".join(el.itertext()))


def _remove_keeping_tail(el) -> None:
    """`el` out of its parent; the text after it (its tail) stays."""
    parent, previous = el.getparent(), el.getprevious()
    if el.tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def page_events(tree) -> list[tuple[str, str]]:
    """The page's visible text in order: ("heading", text) for each h1-h6, ("text", chunk) else."""
    from lxml import etree

    events: list[tuple[str, str]] = []
    hidden, heading = 0, None  # depth inside hidden elements; the open heading and its text
    parts: list[str] = []
    for action, el in etree.iterwalk(tree, events=("start", "end")):
        tag = el.tag if isinstance(el.tag, str) else ""
        if action == "start":
            if tag in HIDDEN:
                hidden += 1
            elif tag in HEADINGS and heading is None and not hidden:
                heading, parts = el, []
            if not hidden and isinstance(el.tag, str) and el.text:
                _add(el.text, heading is not None, parts, events)
            continue
        if tag in HIDDEN:
            hidden -= 1
        elif el is heading:
            events.append(("heading", " ".join("".join(parts).split())))
            heading = None
        if not hidden and el.tail:
            _add(el.tail, heading is not None, parts, events)
    return events


def _add(text: str, in_heading: bool, parts: list[str], events: list[tuple[str, str]]) -> None:
    """Text inside the open heading joins its parts; elsewhere it is a ("text", ...) event."""
    if in_heading:
        parts.append(text)
    else:
        events.append(("text", text))


def with_leads(events: list[tuple[str, str]], kept: list[str]) -> list[tuple[str, str, bool]]:
    """(heading, lead, kept) for each heading: `kept` in order as trafilatura kept them; a lead
    is the text after the heading, through the kept headings but not the dropped ones (which
    are not in the extracted text to be found)."""
    out: list[tuple[str, str, bool]] = []
    k = 0
    for kind, text in events:
        if kind == "heading" and text:
            is_kept = text in kept[k:]
            k = kept.index(text, k) + 1 if is_kept else k
            out.append((text, "", is_kept))
    # fill each heading's lead from what follows it, walking backwards once
    leads: list[str] = []
    following = ""  # squashed text after the current point, up to LEAD_CHARS
    i = len(out)
    for kind, text in reversed(events):
        if kind == "heading" and text:
            i -= 1
            leads.append(following)
            if out[i][2]:
                following = ("".join(text.split()) + following)[:LEAD_CHARS]
        elif kind == "text":
            following = ("".join(text.split()) + following)[:LEAD_CHARS]
    leads.reverse()
    return [(h, lead, is_kept) for (h, _, is_kept), lead in zip(out, leads)]
