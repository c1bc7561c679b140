"""Words hyphenated at a line end, made whole: the one rule for every format. Pure: no Beam here.

A PDF's pages are cleaned with it (pdf_clean.py: PDFium marks its own breaks with U+FFFE); a
text document keeps its text as found and its extraction values are made whole with it
(extractors/values.py): groff (man pages) breaks a word with U+2010 HYPHEN, plain text with '-'.
"""

import re
from collections.abc import Collection

# PDFium returns U+FFFE where a line ends in a hyphen it takes for a word break (and joins the
# two lines). Each pattern starts at a word's start (the lookbehind), so a long run of letters
# costs one pass, not one per letter.
_MARKED = re.compile(r"(?<!\w)(\w*)\ufffe([ \t]*\n?[ \t]*)(\w*)")
# U+2010 HYPHEN ending a line inside a word: how groff prints a word it hyphenated (`un‐` then
# `less` on the next line, indented). groff prints a compound's own hyphen as U+2010 too.
_TYPESET = re.compile(r"(?<!\w)(\w+)\u2010[ \t]*\r?\n[ \t]*(\w+)")
# U+00AD, a soft hyphen, is a break opportunity, never text: it goes, and the line break after it.
_SOFT = re.compile(r"\u00ad(?:[ \t]*\r?\n[ \t]*(?=\w))?")
# A hard '-' ending a line, between letters, that PDFium left unmarked.
_HARD = re.compile(r"(?<![^\W\d_])([^\W\d_]+)-[ \t]*\r?\n[ \t]*([^\W\d_]+)")
_COMPOUND = re.compile(r"[^\W\d_]+[-\u2010][^\W\d_]+")
_WORD = re.compile(r"\w+")
# A line-end hyphen, whichever the rule that joins it; LINE_END_HYPHEN: one inside a word
BREAK = re.compile(r"[-\u2010\u00ad\ufffe][ \t]*\r?\n[ \t]*")
LINE_END_HYPHEN = re.compile(rf"(?<=\w)(?:{BREAK.pattern})(?=\w)")


def words_of(pages: list[str]) -> set[str]:
    """The words and hyphenated compounds ('well-known') the document writes, lowercased, that
    tell how a word broken at a line end is written whole: only those (a set of every word of
    a 64 MiB text would cost more memory than the text)."""
    wanted = set()
    for page in pages:
        marks = [*_marks(_MARKED, "\ufffe", page), *_marks(_TYPESET, "\u2010", page), *_marks(_HARD, "-", page)]
        for m in marks:
            left, right = m.group(1), m.groups()[-1]
            wanted |= {(left + right).lower(), f"{left}-{right}".lower()}
    found: set[str] = set()
    for page in pages if wanted else ():
        low = page.lower().replace(
            "\u2010", "-"
        )  # findall and intersection run in C: a 70,000-character manual in ~5 ms
        found |= wanted.intersection(_WORD.findall(low)) | wanted.intersection(_COMPOUND.findall(low))
    return found


def join_hyphens(text: str, seen: Collection[str] = frozenset()) -> str:
    """Words broken across a line end made whole: `manip\ufffeulation` -> `manipulation`.
    `seen`: words_of() the whole document.

    U+00AD (a soft hyphen) is never text: it goes. U+FFFE is PDFium's mark of a line-end
    hyphen, which may also be a compound's own hyphen. It goes where the document writes the
    joined word elsewhere ('SE\ufffeQUENCE' where 'SEQUENCE' stands) or between lowercase
    letters, unless the document writes the compound with its hyphen ('well-known'); else it
    is a '-' ('Self-Employed', 'ISO-8859'). U+2010 ending a line (groff's break) goes the same
    way, and between two uppercase letters too (`SIM‐` `PLE_BACKUP_SUFFIX`: groff hyphenates
    capitals, and a capitalised compound's hyphen seldom falls at a line end); where it stays
    it is itself, the line break gone. A hard '-' ending a line between letters, which
    PDFium left unmarked, is mostly a compound's ('command-\nline', 'state-\nof-the-art'): it
    joins without the hyphen only where the document writes the joined word elsewhere and the
    right-hand word does not go on with '-'; else the hyphen stays and the line break goes.
    Anything else there (an option '--help', a range '1-\n5') keeps its line break."""

    def lower_break(left: str, right: str) -> bool:
        return left[-1:].islower() and right[:1].islower() and f"{left}-{right}".lower() not in seen

    def marked(m: re.Match) -> str:
        left, gap, right = m.groups()
        if not right:  # nothing follows to join (the page's end): the hyphen it was
            return f"{left}-{gap}"
        if (left + right).lower() in seen or lower_break(left, right):
            return left + right
        return f"{left}-{right}"

    def typeset(m: re.Match) -> str:
        left, right = m.groups()
        upper = left[-1:].isupper() and right[:1].isupper() and f"{left}-{right}".lower() not in seen
        if (left + right).lower() in seen or lower_break(left, right) or upper:
            return left + right
        return f"{left}\u2010{right}"

    def hard(m: re.Match) -> str:
        left, right = m.groups()
        if (left + right).lower() in seen and not text.startswith("-", m.end()):
            return left + right
        return f"{left}-{right}"

    # each pattern runs only on a text holding what it looks for (`in` costs next to nothing)
    if "\u00ad" in text:
        text = _SOFT.sub("", text)
    if "\ufffe" in text:
        text = _MARKED.sub(marked, text)
    if "\u2010" in text:
        text = _TYPESET.sub(typeset, text)
    return _HARD.sub(hard, text) if "-" in text else text


def _marks(pattern: re.Pattern, needle: str, text: str) -> list[re.Match]:
    return list(pattern.finditer(text)) if needle in text else []
