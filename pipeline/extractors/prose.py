"""The prose of a document: its sentences, leaving out lines that are code or console output.

A docstring's summary must not be `>>> json.dumps(...)`, and a sentence must not run from a
shell prompt into the paragraph after it (the segmenter does not split at a line break,
which is right for hard-wrapped prose and wrong for code). So lines are classified first and
the segmenter (pipeline/ingest/sentences.py) runs on each run of prose lines.

Not prose: console prompts and what follows them up to a blank line (`>>> `, `$ `, `In [1]:`,
`C:\\>`, doctest output), tracebacks, fenced code blocks, markdown headings, and lines with
no letters at all (rules, numbers, `'[1, 2]'`); then any "sentence" at least half of whose
tokens are code (`json.dumps(obj) -> str`). Pure: no Beam here.
"""

import re
from collections.abc import Iterator

from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE, sentences

PROMPT = re.compile(
    r"[ \t]*(?:>>>|\(\S+\)[ \t]*\$|\$|%|In \[\d*\]:|PS [^>\n]*>|[A-Za-z]:\\[^>\n]*>|\S+@\S+:\S*[#$])(?:[ \t]|$)"
)
TRACEBACK = re.compile(r"[ \t]*Traceback \(most recent call last\):")
FENCE = re.compile(r"[ \t]*(```|~~~)")
HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
LETTER = re.compile(r"[^\W\d_]")
# A token of code: brackets, comparison/assignment, or an operator standing alone.
CODE_TOKEN = re.compile(r"[(){}\[\]<>=;|\\]|^(?:->|=>|\+=|-=|\*\*|//|&&|\|\||::)$")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    at = 0
    for line in text.splitlines(keepends=True):
        yield at, line
        at += len(line)


def code_lines(text: str) -> list[tuple[int, int]]:
    """(start, end) character ranges of the lines that are not prose, in order."""
    out: list[tuple[int, int]] = []
    fence = None  # the marker of the open fenced block
    console = False  # inside console output, which runs until a blank line
    traceback = None  # the indentation of the open traceback's first line
    for at, line in _lines(text):
        blank = not line.strip()
        indent = len(line) - len(line.lstrip())
        code = True
        if fence:
            fence = None if line.strip().startswith(fence) else fence
        elif m := FENCE.match(line):
            fence, console = m.group(1), False
        elif traceback is not None and not blank:
            # frames are indented further; the exception line ends it, and is part of it
            traceback = traceback if indent > traceback else None
        elif TRACEBACK.match(line):
            traceback = indent
        elif PROMPT.match(line):
            console = True
        elif console and not blank:
            pass
        else:
            console, traceback = False, None
            code = not blank and (HEADING.match(line) is not None or LETTER.search(line) is None)
        if code:
            if out and out[-1][1] == at:
                out[-1] = (out[-1][0], at + len(line))
            else:
                out.append((at, at + len(line)))
    return out


def prose_sentences(text: str, language: str = DEFAULT_LANGUAGE) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences outside code lines, in order."""
    spans: list[tuple[int, int]] = []
    at = 0
    for start, end in [*code_lines(text), (len(text), len(text))]:
        if start > at:
            spans += [(at + s.start, at + s.end) for s in sentences(text[at:start], language)]
        at = end
    return [(s, e) for s, e in spans if not looks_like_code(text[s:e])]


def looks_like_code(sentence: str) -> bool:
    """At least half of its whitespace-separated tokens are code (`json.dumps(obj) -> str`)."""
    tokens = sentence.split()
    return sum(CODE_TOKEN.search(t) is not None for t in tokens) * 2 >= len(tokens)
