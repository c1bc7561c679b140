"""A web page -> every text a reader would see, through the standard library's html.parser,
one line per block (a table of contents stays one entry a line) and its h1-h6 as sections.
Permalink glyphs (Sphinx's `¶` after each heading) are not text.

Linear in the page: a comment, tag or declaration that never ends runs to the end of the page
and is dropped there, as a browser drops it (html.parser would retry it at every later `<`,
each retry a search to the end, and keep its markup as text: an unclosed `<!--` repeated over
128 KiB took 12.6 s). Runs in the sandbox all the same, bounded like the native parsers.
"""

import bisect
from html.parser import HTMLParser

from docbeam.pipeline.ingest.headings import is_permalink, permalink_class

HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}


class _VisibleText(HTMLParser):
    """Collects text a reader would see. Event-driven, so deep nesting costs no recursion."""

    HIDDEN = {"script", "style", "noscript", "template", "title", "svg", "iframe", "object"}
    # Elements a browser lays out as blocks (or rows, cells, line breaks): each ends a line.
    BLOCK = HEADINGS | {
        *("p", "div", "br", "hr", "li", "dl", "dt", "dd", "ul", "ol", "menu"),
        *("table", "caption", "thead", "tbody", "tfoot", "tr", "td", "th"),
        *("section", "article", "aside", "nav", "main", "header", "footer", "address"),
        *("pre", "blockquote", "figure", "figcaption", "details", "summary", "form", "fieldset", "legend"),
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        # ink[i]: non-space characters in parts[:i]. A link's text is read only when it holds
        # at most one (a glyph can be no more): joining every link's text is quadratic in nested links.
        self.ink: list[int] = [0]
        self.hidden_depth = 0
        self.links: list[tuple[int, bool, str]] = []  # open <a>: where its text starts, class match, href
        self.heading: int | None = None  # where the open heading's text starts in parts
        self.headings: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.HIDDEN:
            self.hidden_depth += 1
        elif tag == "a":
            attrs = dict(attrs)
            self.links.append((len(self.parts), permalink_class(attrs.get("class")), attrs.get("href") or ""))
        elif tag in self.BLOCK:
            self._add("\n")
            if tag in HEADINGS and self.heading is None:
                self.heading = len(self.parts)

    def handle_startendtag(self, tag, attrs):
        if tag in self.BLOCK:
            self._add("\n")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif tag == "a" and self.links:
            at, by_class, href = self.links.pop()
            if by_class or self._is_permalink(at, href):
                del self.parts[at:]
                del self.ink[at + 1 :]
        elif tag in self.BLOCK:
            if tag in HEADINGS and self.heading is not None:
                self.headings.append(" ".join("".join(self.parts[self.heading :]).split()))
                self.heading = None
            self._add("\n")

    def handle_data(self, data):
        if not self.hidden_depth:
            self._add(data)

    def close(self):
        # feed() had the whole page, so what it left unparsed starts with a comment, tag or
        # declaration that never ends: dropped, as a browser drops one at the end of the page.
        # (A lone "<" or "</" at the end is text to a browser too.)
        if self.rawdata.startswith("<") and self.rawdata not in ("<", "</"):
            self.rawdata = ""
        super().close()

    def _add(self, text: str) -> None:
        self.parts.append(text)
        self.ink.append(self.ink[-1] + len("".join(text.split())))

    def _is_permalink(self, at: int, href: str) -> bool:
        """headings.is_permalink of the link whose text is parts[at:], without joining that text
        (a glyph is one non-space character at most, and the part that holds it is found by search)."""
        ink = self.ink[-1] - self.ink[at]
        if ink > 1:
            return False
        text = self.parts[bisect.bisect_right(self.ink, self.ink[at]) - 1] if ink else ""
        return is_permalink(None, href, text)


def visible_page(markup: str) -> tuple[str, list[tuple[int, str]]]:
    """(every visible text, one block a line; (offset, heading) for each h1-h6 in it, in order)."""
    parser = _VisibleText()
    parser.feed(markup)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    text = "\n".join(line for line in lines if line)
    sections, at = [], 0
    starts: dict[str, list[int]] = {}  # offset of each line, to find a heading as a whole line after the previous one
    for line in text.split("\n"):
        starts.setdefault(line, []).append(at)
        at += len(line) + 1
    after = -1
    for heading in parser.headings:
        if not heading or "\n" in heading:
            continue
        found = next((s for s in starts.get(heading, ()) if s > after), None)
        if found is not None:
            sections.append((found, heading))
            after = found
    return text, sections


def visible_text(markup: str) -> str:
    return visible_page(markup)[0]
