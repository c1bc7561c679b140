"""A web page -> every text a reader would see, through the standard library's html.parser,
one line per block (a table of contents stays one entry a line) and its h1-h6 as sections.
Permalink glyphs (Sphinx's `¶` after each heading) are not text.

Runs in the sandbox: pure Python, but quadratic on some markup (an unclosed `<!--`), so it
needs the sandbox's deadline like the native parsers."""

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

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
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
            self.parts.append("\n")
            if tag in HEADINGS and self.heading is None:
                self.heading = len(self.parts)

    def handle_startendtag(self, tag, attrs):
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in self.HIDDEN:
            self.hidden_depth = max(0, self.hidden_depth - 1)
        elif tag == "a" and self.links:
            at, by_class, href = self.links.pop()
            if by_class or is_permalink(None, href, "".join(self.parts[at:])):
                del self.parts[at:]
        elif tag in self.BLOCK:
            if tag in HEADINGS and self.heading is not None:
                self.headings.append(" ".join("".join(self.parts[self.heading :]).split()))
                self.heading = None
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.hidden_depth:
            self.parts.append(data)


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
