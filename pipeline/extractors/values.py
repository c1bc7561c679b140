"""An extraction's value as a person reads it: the text at its span with its whitespace
collapsed (a run of spaces, tabs or line breaks is one space) and its words hyphenated at a
line end made whole (ingest/hyphens.py, the rule PDFs are cleaned with). The span itself is the
document's text as found. Pure: no Beam here."""

from collections.abc import Collection

from docbeam.pipeline.ingest.hyphens import LINE_END_HYPHEN, join_hyphens


def readable(text: str, seen: Collection[str] = frozenset()) -> str:
    """`text` as a value: line-end hyphens joined, whitespace collapsed. `seen`: the document's
    words_of() where known (it tells `bud-` `get` from `well-` `known`); without it, the rule
    that needs none."""
    if LINE_END_HYPHEN.search(text):
        text = join_hyphens(text, seen)
    return " ".join(text.split())
