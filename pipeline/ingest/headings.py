"""Headings of a web page as sections: which links are permalink glyphs (not text), and where
the headings the main-content extractor dropped go back into its text. Pure: no Beam here."""

import bisect
import re

# Sphinx (headerlink), MkDocs (headerlink), GitHub and Hugo (anchor), Jekyll/kramdown and
# Pelican (permalink), VuePress (header-anchor), Docusaurus (hash-link), anchor.js (anchorjs-link)
PERMALINK_CLASSES = frozenset({"headerlink", "anchor", "permalink", "header-anchor", "hash-link", "anchorjs-link"})
# What such a link shows: pilcrow, section sign, hash, link symbol, anchor, zero-width space
PERMALINK_GLYPHS = frozenset({"¶", "§", "#", "🔗", "⚓", "\u200b", ""})
LEAD_CHARS = 40  # non-space characters of the text after a heading that find it again
MIN_LEAD_CHARS = 12  # a shorter lead ("OK") would be found anywhere


def is_permalink(classes: str | None, href: str | None, text: str) -> bool:
    """A link that marks a heading's address rather than saying anything: one of the classes
    documentation generators give it, or an in-page link whose only text is a glyph."""
    return permalink_class(classes) or ((href or "").startswith("#") and text.strip() in PERMALINK_GLYPHS)


def permalink_class(classes: str | None) -> bool:
    return not PERMALINK_CLASSES.isdisjoint((classes or "").split())


def squash(text: str) -> str:
    return "".join(text.split())


def place_headings(text: str, headings: list[tuple[str, str, bool]]) -> tuple[str, list[tuple[int, str]]]:
    """`text` with every heading on a line of its own, and (offset, heading) for each.

    `headings`: (heading, lead, kept) in page order; `lead` is the text that follows the heading
    on the page, `kept` says the extractor kept the heading in `text` (as a line of its own).
    A dropped heading goes in on its own line before its lead; a heading whose lead is not in
    the text (navigation, sidebars) is not part of the main content and stays out. The search
    only moves forward, so headings keep their page order and each is placed once."""
    chars = [i for i, c in enumerate(text) if not c.isspace()]  # squashed index -> text offset
    squashed = "".join(text[i] for i in chars)
    at = 0  # offset in `text` the next search starts from
    inserts: list[tuple[int, str]] = []  # (offset, heading) to add, in order
    kept_at: dict[int, str] = {}  # offset of a heading already in the text
    for heading, lead, kept in headings:
        if kept and (found := _line_at(text, heading, at)) is not None:
            kept_at[found] = heading
            at = found + len(heading)
            continue
        lead = squash(lead)[:LEAD_CHARS]
        if len(lead) < MIN_LEAD_CHARS:
            continue
        start = bisect.bisect_left(chars, at)
        hit = squashed.find(lead, start)
        if hit < 0:
            continue
        at = chars[hit]
        inserts.append((at, heading))
    return _insert(text, inserts, kept_at)


def _line_at(text: str, line: str, start: int) -> int | None:
    """The offset of the first line after `start` that is `line` (surrounding spaces aside)."""
    m = re.compile(rf"^[ \t]*({re.escape(line)})[ \t]*$", re.MULTILINE).search(text, start)
    return m.start(1) if m else None


def _insert(text: str, inserts: list[tuple[int, str]], kept_at: dict[int, str]) -> tuple[str, list[tuple[int, str]]]:
    parts: list[str] = []
    sections: list[tuple[int, str]] = []
    length, done = 0, 0  # characters written so far; offset in `text` copied up to
    pending = sorted(kept_at.items())

    def copy(upto: int) -> None:
        nonlocal length, done
        while pending and pending[0][0] < upto:
            offset, heading = pending.pop(0)
            sections.append((length + offset - done, heading))
        parts.append(text[done:upto])
        length += upto - done
        done = upto

    for offset, heading in inserts:
        line_start = text.rfind("\n", 0, offset) + 1
        if text[line_start:offset].strip():  # the lead runs on from other text: break the line
            copy(offset)
            while parts and parts[-1][-1:] in (" ", "\t"):
                parts[-1] = parts[-1][:-1]
                length -= 1
            parts.append("\n")
            length += 1
        else:
            copy(line_start)
        sections.append((length, heading))
        parts.append(heading + "\n")
        length += len(heading) + 1
    copy(len(text))
    return "".join(parts), sections
