"""The prose of a document: its sentences, leaving out lines that are code or console output.

A docstring's summary must not be `>>> json.dumps(...)`, and a sentence must not run from a
shell prompt into the paragraph after it (the segmenter does not split at a line break,
which is right for hard-wrapped prose and wrong for code). So lines are classified first and
the segmenter (pipeline/ingest/sentences.py) runs on each run of prose lines.

Not prose: console prompts and what follows them up to a blank line (`>>> `, `$ `, `In [1]:`,
`C:\\>`, doctest output), tracebacks, fenced code blocks (and the code a format marks: Markdown's),
markdown headings, lines with no letters at all (rules, numbers, `'[1, 2]'`), navigation lines
(`Next: ..., Previous: ...`), usage and synopsis lines (`cp [OPTION]... SOURCE DEST`), C-family
source lines (`#include <node.h>`, `// note`, `}`) and C declarations (`ffi_status ffi_prep_cif
(ffi_cif *cif, ...`); headings, known (the format's sections) or by
their shape (heading_lines), which would otherwise start the sentence after them; then any
"sentence" at least half of whose tokens are code (`json.dumps(obj) -> str`).
Pure: no Beam here.
"""

import bisect
import re
from collections.abc import Iterator, Sequence

from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE, sentences

# `user@host:dir$ `: user and host without `@` (and the host without `:`), so a long line full of
# `@` and `:` is one linear scan, not a cubic backtrack (`'a@:' * 2000` took 58 s before).
PROMPT = re.compile(
    r"[ \t]*(?:>>>|\(\S+\)[ \t]*\$|\$|%|In \[\d*\]:|PS [^>\n]*>|[A-Za-z]:\\[^>\n]*>|[^\s@]+@[^\s@:]+:\S*?[#$])"
    r"(?:[ \t]|$)"
)
TRACEBACK = re.compile(r"[ \t]*Traceback \(most recent call last\):")
FENCE = re.compile(r"[ \t]*(```|~~~)")
HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
LETTER = re.compile(r"[^\W\d_]")
HEADING_WORDS = 8  # longer lines are statements, not headings or labels
HEADING_END = re.compile(r"[^\W_]$|[)\]]$")  # a letter, digit or closing bracket last
# a numbered heading or contents entry: `2. Users and Groups`, `2.1. Removal of...`, `3.2 Main`
NUMBERED = re.compile(r"[ \t]*(?:\d+(?:\.\d+)*\.|\d+(?:\.\d+)+)[ \t]+[^\W\d_]")
BULLET = re.compile(r"[-*+•‣◦][ \t]+")  # `- item`, as markdown and trafilatura write list items
# A token of code: brackets, comparison/assignment, or an operator standing alone.
CODE_TOKEN = re.compile(r"[(){}\[\]<>=;|\\]|^(?:->|=>|\+=|-=|\*\*|//|&&|\|\||::)$")
# Navigation printed as text (an Info page's `File: ...,  Node: ...,  Next: ...,  Up: ...`,
# texinfo HTML's `Next: ..., Previous: ..., Up: ...`): a line that starts with such a link.
NAVIGATION = re.compile(r"[ \t]*(?:(?:File|Node):[^\n]*,[ \t]*)?(?:Next|Prev(?:ious)?|Up)[ \t]*:[ \t]*\S")
# A command line's usage as programs print it (`Usage: zstd [args]`, `usage: git [--version]`)
USAGE = re.compile(r"[ \t]*usage[ \t]*:", re.IGNORECASE)
# Tokens of a synopsis: an option (`-T`, `--suffix=SUFFIX`), an optional part in brackets
# (`[OPTION]...`, `[-T]`, `[FILE]`), a placeholder in capitals (`SOURCE`, `DEST`, `FILE...`),
# an ellipsis, or a choice bar.
OPTION = re.compile(r"-{1,2}[A-Za-z0-9?][\w=.,:-]*[,;]?")
OPTIONAL = re.compile(r"\[[^\]\s]*\]?(?:\.\.\.)?[,;]?|[^\[\s]*\](?:\.\.\.)?[,;]?")
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]{2,}(?:\.\.\.)?[,;]?|\.\.\.|\|")
# A line of C-family source that no prose line looks like: a preprocessor directive, a line
# comment, a line opening a block (`int main(void) {`) or closing one (`}`, `});`).
SOURCE_LINE = re.compile(
    r"[ \t]*(?:#[ \t]*(?:include|define|undef|ifn?def|if|elif|else|endif|pragma)\b|//|[})\]]+[ \t;,]*$)|.*\{[ \t]*$"
)
# A C declaration: a name, `(`, then a parameter written `type name` with a pointer star or an
# identifier with an underscore (`ffi_prep_cif (ffi_cif *cif,`, `asn1_get_octet_der (const
# unsigned char * der,`, `Hook(v8::Isolate* isolate,`), or a parenthesised list ending the line
# with `);`; or a line of its parameters (`void* arg);`, `void (*fun)(void* arg),`).
C_DECLARATION = re.compile(
    r"[A-Za-z_]\w*[ \t]*\([ \t]*(?:(?:const|unsigned|signed|struct|enum|volatile)[ \t]+)*"
    r"(?:[A-Za-z_][\w:]*[ \t]*\*+[ \t]*\w+|[A-Za-z_]\w*_\w*[ \t]+\**\w+|void[ \t]*\))"
    r"|\)[ \t]*;[ \t]*$"
    # a parameter continued on a line of its own (`void* arg);`), a function pointer (`(*fun)(`)
    r"|^[ \t]*(?:const[ \t]+)?[A-Za-z_][\w:]*[ \t]*\*+[ \t]*\w+[ \t]*[,)]|\(\*\w+\)[ \t]*\("
)


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
            code = not blank and (
                HEADING.match(line) is not None or LETTER.search(line) is None or not_prose_line(line)
            )
        if code:
            if out and out[-1][1] == at:
                out[-1] = (out[-1][0], at + len(line))
            else:
                out.append((at, at + len(line)))
    return out


def not_prose_line(line: str) -> bool:
    """A line that is navigation, a usage or synopsis line, C-family source or a C declaration
    (see above)."""
    return (
        NAVIGATION.match(line) is not None
        or SOURCE_LINE.match(line) is not None
        or USAGE.match(line) is not None
        or synopsis(line)
        or C_DECLARATION.search(line) is not None
    )


def synopsis(line: str) -> bool:
    """A command's synopsis (`cp [OPTION]... [-T] SOURCE DEST`): after its first word (the
    command), an optional part or option among its tokens and at least half of them options,
    optional parts, placeholders or ellipses. Prose citing `[MIME]` or `-x` has few of them."""
    tokens = line.split()[1:]
    if len(tokens) < 2:
        return False
    optional = sum(OPTION.fullmatch(t) is not None or OPTIONAL.fullmatch(t) is not None for t in tokens)
    shaped = sum(PLACEHOLDER.fullmatch(t) is not None for t in tokens)
    return optional >= 1 and (optional + shaped) * 2 >= len(tokens)


def heading_lines(text: str, headings: Sequence[tuple[int, str]] = ()) -> list[tuple[int, int]]:
    """(start, end) ranges of the lines that are headings: those the format marked (`headings`:
    (offset, heading), a document's sections), and lines shaped like one, so that a heading is
    never the start of the sentence after it (a sentence runs on over a single line break).

    Shaped like a heading: a line of at most HEADING_WORDS words that does not end the way
    wrapped prose breaks (a letter, digit or closing bracket last, no comma or full stop), and
    that is numbered (`2.1. Removal of...`, a table of contents), or is followed by a line
    indented 4 or more columns deeper (a man page's `NAME`, `-d, --date=STRING`), or by a line
    starting with a capital or digit that is much longer (`Startup and Code Execution` then
    `Upon startup with the -s option, IDLE will...`). Wrapped prose lines are of similar length,
    so a short one before a capitalised word (`...met him in` / `Paris...`) stays prose."""
    marked = {at for at, _ in headings}
    lines = list(_lines(text))
    out: list[tuple[int, int]] = []
    for i, (at, line) in enumerate(lines):
        nxt = lines[i + 1][1] if i + 1 < len(lines) else ""
        if at in marked or (line.strip() and nxt.strip() and _heading_shaped(line, nxt)):
            if out and out[-1][1] == at:
                out[-1] = (out[-1][0], at + len(line))
            else:
                out.append((at, at + len(line)))
    return out


def _heading_shaped(line: str, nxt: str) -> bool:
    words = line.split()
    if len(words) > HEADING_WORDS or not HEADING_END.search(line.rstrip()):
        return False
    if NUMBERED.match(line):
        return True
    indent, next_indent = (len(s.expandtabs(8)) - len(s.expandtabs(8).lstrip()) for s in (line, nxt))
    if next_indent >= indent + 4:
        return True
    first = nxt.lstrip()[:1]
    return (first.isupper() or first.isdigit()) and len(line.strip()) < 0.6 * len(nxt.strip())


def prose_sentences(
    text: str,
    language: str = DEFAULT_LANGUAGE,
    headings: Sequence[tuple[int, str]] = (),
    code: Sequence[tuple[int, int]] = (),
) -> list[tuple[int, int]]:
    """(start, end) spans of the sentences outside code and heading lines, in order. `code`:
    ranges the format marked as code (Markdown's code blocks), left out as code lines are."""
    spans: list[tuple[int, int]] = []
    at = 0
    skip = _merge(_merge(code_lines(text), heading_lines(text, headings)), list(code))
    for start, end in [*skip, (len(text), len(text))]:
        if start > at:
            spans += [(at + s.start, at + s.end) for s in sentences(text[at:start], language)]
        at = end
    spans = [(s + _bullet(text, s, e), e) for s, e in spans]  # a list item's marker is not its sentence
    return [(s, e) for s, e in spans if s < e and not looks_like_code(text[s:e])]


def _bullet(text: str, start: int, end: int) -> int:
    """The length of the list marker that starts the sentence, 0 if none."""
    m = BULLET.match(text, start, end)
    return m.end() - start if m else 0


def overlaps(ranges: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) meets any of `ranges` (sorted, not overlapping one another)."""
    i = bisect.bisect_right(ranges, (start, float("inf"))) - 1  # the last range starting at or before start
    return any(a < end and start < b for a, b in ranges[max(i, 0) : i + 2])


def _merge(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(a + b):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


def looks_like_code(sentence: str) -> bool:
    """At least half of its whitespace-separated tokens are code (`json.dumps(obj) -> str`)."""
    tokens = sentence.split()
    return sum(CODE_TOKEN.search(t) is not None for t in tokens) * 2 >= len(tokens)
