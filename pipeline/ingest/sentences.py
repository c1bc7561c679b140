"""Sentence and paragraph boundaries, shared by chunking, summaries and keyphrase candidates.

sentencex (maintained, offline, rule-based, ~300 languages, no dependencies) does the
segmenting: it knows abbreviations ("Dr.", "e.g."), decimals and versions ("1.2.3"), and does
not split at a hard-wrapped line. This module only turns its output into character spans of
the original text. Pure: no Beam here.

One workaround: sentencex 1.0.32, once it has seen a list item ("- a", "* b", "2. c" at a line
start), stops splitting at the next one until a blank line: after "- a\\n- b\\n" a whole
manual section became one sentence (a keyphrase `default Tk` came from "default.\\nA Tk").
So each list item starts a block of its own here, and sentencex segments block by block.
"""

import re
from dataclasses import dataclass

from sentencex import get_sentence_boundaries

DEFAULT_LANGUAGE = "en"
# A line break before a list item (a bullet or a number, then a space) ends a block.
LIST_ITEM = re.compile(r"\n(?=[ \t]*(?:[-*•‣◦▪–]|\d{1,3}[.)])[ \t])")


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int  # first character (leading whitespace skipped)
    end: int  # one past the last character (trailing whitespace dropped)
    paragraph_end: bool  # a blank line (or the end of the text) follows


def sentences(text: str, language: str = DEFAULT_LANGUAGE) -> list[Sentence]:
    """The sentences of `text` in order, as trimmed character spans."""
    out: list[Sentence] = []
    for block_start, block_end in _blocks(text):
        for b in get_sentence_boundaries(language, text[block_start:block_end]):
            if b["is_paragraph_break"]:
                if out:
                    out[-1] = Sentence(out[-1].start, out[-1].end, True)
                continue
            start, end = block_start + b["start_index"], block_start + b["end_index"]
            while start < end and text[start].isspace():
                start += 1
            while end > start and text[end - 1].isspace():
                end -= 1
            if end > start:
                out.append(Sentence(start, end, False))
    if out:
        out[-1] = Sentence(out[-1].start, out[-1].end, True)
    return out


def _blocks(text: str) -> list[tuple[int, int]]:
    """Spans that together cover `text`, cut before each list item's line."""
    cuts = [0, *(m.start() + 1 for m in LIST_ITEM.finditer(text)), len(text)]
    return [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
