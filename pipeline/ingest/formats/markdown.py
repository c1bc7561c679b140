"""Markdown (.md, .markdown): one document per file, its blocks read by markdown-it-py
(CommonMark, plus tables) in the sandbox (adapters/markdown_blocks.py).

Its text is the Markdown as written, less the lines that are markup and not text: YAML front
matter (its mapping becomes the document's `metadata`) and HTML comment blocks (a licence
header, an editor's note), counted as a PDF's layout lines are (Provenance.markup_lines).
Headings (ATX `## Usage` and setext) are sections, at the start of their line, named by their
text without markup; code blocks (fenced and indented) and raw HTML blocks are code
(Provenance.code): no summary sentence comes from them. Everything else is kept as written, so
chunk text and offsets are the file's own lines."""

import re
from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Provenance, reject
from docbeam.pipeline.ingest.adapters import markdown_blocks
from docbeam.pipeline.ingest.fields import STAGE, Record, document
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import read_text
from docbeam.pipeline.ingest.sandbox import ParseProblem, Sandbox

LINE_END = re.compile(r"\r\n?|\n")  # what markdown-it counts lines by
# Inline markup that is not prose, as CommonMark writes it; every repeat bounded, so a hostile
# text costs linear time: an image, a link's destination `](...)`, a reference definition line,
# an autolink `<scheme:...>`.
_DEST = r"\((?:[^()\s]{0,2048})(?:[ \t]+\"[^\"\n]{0,256}\")?\)"
INLINE_MARKUP = re.compile(
    r"!\[[^\[\]\n]{0,512}\]"
    + _DEST
    + r"|\]"
    + _DEST
    + r"|(?m:^ {0,3}\[[^\[\]\n]{1,512}\]:[ \t]*\S[^\n]{0,2048})"
    + r"|<[A-Za-z][A-Za-z0-9+.-]{1,31}:[^<>\s]{0,2048}>"
)


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    text = read_text(path, f, cfg.max_doc_bytes)
    if not isinstance(text, str):
        yield text
        return
    source = text.removeprefix("\ufeff")
    try:
        metadata, body_from, blocks = sandbox.call(markdown_blocks.extract, source)
    except ParseProblem as p:
        yield reject(STAGE, p.code, path, p.message, row=0, doc_id=path)
        return
    yield assemble(path, source, metadata, body_from, [tuple(b) for b in blocks])


def assemble(path: str, source: str, metadata: dict, body_from: int, blocks: list[tuple]) -> Record:
    """The Document of `source` from what the adapter found in it (see markdown_blocks.extract)."""
    starts = line_starts(source)
    first = next(i for i, at in enumerate(starts) if at >= body_from)  # the body's first line
    dropped = set(range(first))  # the front matter's lines
    headings: list[tuple[int, str]] = []  # (line, heading)
    code: list[tuple[int, int]] = []  # (first line, end line)
    for kind, a, b, title in blocks:
        a, b = a + first, b + first
        if kind == "comment":
            dropped |= set(range(a, b))
        elif kind == "code":
            code.append((a, b))
        else:
            headings.append((a, title))
    parts, new_at, at = [], {}, 0  # the kept lines; new_at[line]: its offset in the text
    for line in range(len(starts) - 1):
        if line in dropped:
            continue
        piece = source[starts[line] : starts[line + 1]]
        new_at[line], at = at, at + len(piece)
        parts.append(piece)
    text = "".join(parts)
    lead = len(text) - len(text.lstrip("\r\n"))  # the blank lines a dropped block leaves on top
    text = text[lead:]

    def offset(line: int) -> int:
        return max(0, new_at.get(line, at) - lead)

    prov = Provenance(
        format="markdown",
        sections=tuple((offset(line), title) for line, title in headings if line in new_at),
        code=tuple((offset(a), offset(b)) for a, b in code if offset(a) < offset(b)),
        markup=tuple(m.span() for m in INLINE_MARKUP.finditer(text)),
        markup_lines=len(dropped),
    )
    return document(path, 0, path, text, prov, metadata)


def line_starts(text: str) -> list[int]:
    """The offset where every line starts, then the text's length."""
    ends = [m.end() for m in LINE_END.finditer(text)]
    return [0, *ends] + ([len(text)] if not ends or ends[-1] != len(text) else [])
