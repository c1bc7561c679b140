"""A Markdown file's blocks through markdown-it-py, and its YAML front matter through PyYAML:
runs in the sandbox only (a parser of hostile text gets a deadline and a memory cap: a YAML
alias bomb or a pathological nesting costs one error line, not the worker). The libraries are
imported inside the function, which only the sandbox's child calls."""

import datetime
import re

# Front matter: a first line of `---`, YAML, then `---` (or `...`) on a line of its own.
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)
COMMENT = re.compile(r"\A\s*<!--.*-->\s*\Z", re.DOTALL)
CODE_BLOCKS = frozenset({"fence", "code_block", "html_block"})


def extract(source: str) -> tuple[dict, int, list[tuple[str, int, int, str]]]:
    """(front matter, offset where the body starts, blocks): the front matter's mapping ({}
    and offset 0 when there is none, or what looks like one is not a YAML mapping: a thematic
    break `---` may open a file); each block (kind, first line, end line, heading), lines
    counted in the body from 0 as markdown-it counts them, kind `comment` (an HTML comment
    block), `code` (fenced, indented, raw HTML) or `heading` (its text without markup)."""
    from markdown_it import MarkdownIt

    metadata, body_from = front_matter(source)
    tokens = MarkdownIt("commonmark").enable("table").parse(source[body_from:])
    blocks = []
    for i, tok in enumerate(tokens):
        if tok.map is None:
            continue
        a, b = tok.map
        if tok.type == "html_block" and COMMENT.match(tok.content):
            blocks.append(("comment", a, b, ""))
        elif tok.type in CODE_BLOCKS:
            blocks.append(("code", a, b, ""))
        elif tok.type == "heading_open" and (title := plain(tokens[i + 1].children or [])):
            blocks.append(("heading", a, b, title))
    return metadata, body_from, blocks


def front_matter(source: str) -> tuple[dict, int]:
    import yaml

    m = FRONT_MATTER.match(source)
    if not m:
        return {}, 0
    try:
        found = yaml.safe_load(m.group(1))
    except yaml.YAMLError:
        return {}, 0
    if not isinstance(found, dict):
        return {}, 0
    return {str(k): _plain(v) for k, v in found.items()}, m.end()


def _plain(value):
    """A YAML value as JSON holds it: dates and times as ISO 8601 strings, other scalars as they are."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def plain(children) -> str:
    """A heading's text without its markup (`Install **docbeam**` -> `Install docbeam`)."""
    words = []
    for child in children:
        if child.type in ("text", "code_inline"):
            words.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            words.append(" ")
        elif child.type == "image":
            words.append(child.content)
    return " ".join("".join(words).split())
