"""Entities by deterministic patterns: emails, URLs, dates, money amounts, phone numbers.

No model involved. Patterns are tried in priority order (url, email, date, money, phone);
a span claimed by one is not matched again by a later one.
"""

import bisect
import re

from pipeline.core.records import Document
from pipeline.extractors.base import Extractor, row

MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
CURRENCY = r"(?:USD|EUR|GBP|JPY|CHF|CAD|AUD)"
AMOUNT = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
SCALE = r"(?:\s?(?:thousand|million|billion|[kKmMbB]n?)\b)?"

PATTERNS: list[tuple[str, re.Pattern]] = [
    ("url", re.compile(r"\bhttps?://[^\s<>\"'\]]*[^\s<>\"'\].,;:!?)]")),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b")),
    (
        "date",
        re.compile(
            rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}/\d{{1,2}}/\d{{2,4}}\b"
            rf"|\b{MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b|\b\d{{1,2}} {MONTH} \d{{4}}\b"
        ),
    ),
    (
        "money",
        re.compile(
            rf"[$€£¥]\s?(?:{AMOUNT}){SCALE}|\b{CURRENCY}\s?(?:{AMOUNT}){SCALE}"
            rf"|\b(?:{AMOUNT}){SCALE}\s?(?:{CURRENCY}|dollars|euros|pounds|francs)\b"
        ),
    ),
    (
        "phone",
        re.compile(r"(?<![\w/])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{1,4}\)[\s.-]?)?\d{2,4}(?:[\s.-]\d{2,4}){1,3}(?![\w/])"),
    ),
]


def find_entities(text: str) -> list[tuple[str, str, int, int]]:
    """(type, value, start, end), in text order, without overlaps."""
    starts: list[int] = []  # claimed spans, sorted and disjoint: starts[i] < ends[i] <= starts[i + 1]
    ends: list[int] = []
    found = []
    for kind, pattern in PATTERNS:
        for m in pattern.finditer(text):
            s, e = m.span()
            i = bisect.bisect_right(starts, s)
            if (i and ends[i - 1] > s) or (i < len(starts) and starts[i] < e):
                continue  # overlaps a span a higher-priority pattern claimed
            if kind == "phone" and not 7 <= sum(ch.isdigit() for ch in m.group()) <= 15:
                continue
            starts.insert(i, s)
            ends.insert(i, e)
            found.append((kind, m.group(), s, e))
    return sorted(found, key=lambda f: f[2])


class Entities(Extractor):
    name = "entities"

    def text_rows(self, doc: Document) -> list[dict]:
        return [row(doc.doc_id, f"entity:{kind}", value, 1.0, s, e) for kind, value, s, e in find_entities(doc.text)]
