"""Sentence and paragraph boundaries, shared by chunking, summaries and keyphrase candidates.

sentencex (maintained, offline, rule-based, ~300 languages, no dependencies) does the
segmenting: it knows abbreviations ("Dr.", "e.g."), decimals and versions ("1.2.3"), and does
not split at a hard-wrapped line. This module only turns its output into character spans of
the original text. Pure: no Beam here.
"""

from dataclasses import dataclass

from sentencex import get_sentence_boundaries

DEFAULT_LANGUAGE = "en"


@dataclass(frozen=True, slots=True)
class Sentence:
    start: int  # first character (leading whitespace skipped)
    end: int  # one past the last character (trailing whitespace dropped)
    paragraph_end: bool  # a blank line (or the end of the text) follows


def sentences(text: str, language: str = DEFAULT_LANGUAGE) -> list[Sentence]:
    """The sentences of `text` in order, as trimmed character spans."""
    out: list[Sentence] = []
    for b in get_sentence_boundaries(language, text):
        if b["is_paragraph_break"]:
            if out:
                out[-1] = Sentence(out[-1].start, out[-1].end, True)
            continue
        start, end = b["start_index"], b["end_index"]
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            out.append(Sentence(start, end, False))
    if out:
        out[-1] = Sentence(out[-1].start, out[-1].end, True)
    return out
