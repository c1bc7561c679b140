"""Entities by deterministic patterns: URLs, emails, dates, money amounts, phone numbers.

Each type is a regular expression for its candidates plus a check of what a regular
expression cannot say well (a month is 1-12; a phone number is written like one). Types are
tried in priority order (url, email, date, money, phone); a span claimed by one is not matched
again by a later one, so `2026-01-15` is a date and never a phone.

Phone numbers are where naive patterns misfire: copyright year ranges (`1995-2022`),
regulation and section numbers (`252.227-7013`, `4.2.1`), versions (`2.6.32-754`), ISBNs and
postcodes are all digit groups with separators. So a digit run counts as a phone number only
when it is written the way people write phone numbers: with an international prefix
(`+44 ...`, `0044 ...`), as a North American number (`(415) 555-0134`, `415.555.0134`,
`1-800-555-0199`: area code and exchange starting 2-9, one separator style), or right after a
word that announces one (`Tel:`, `call`, `fax`, ...).
Pure: no Beam, no model.
"""

import calendar
import re
import unicodedata
from collections.abc import Callable, Iterator

from docbeam.pipeline.extractors import locale_patterns
from docbeam.pipeline.ingest.sentences import DEFAULT_LANGUAGE

Span = tuple[int, int]
# (start, end, value): value None is the text at the span, as it is for all but joined URLs
Found = tuple[int, int, str | None]

# --- url -------------------------------------------------------------------------------------
# Brackets are never part of a URL here (markdown's `[text](url)` runs them together);
# parentheses are, when balanced (`.../Mercury_(planet)`). Typographic quotes and CJK
# punctuation are never URL characters (RFC 3986 URLs are ASCII), so they end one.
QUOTES = "\u2018\u2019\u201a\u201c\u201d\u201e\u00ab\u00bb\u2039\u203a"  # ‘’‚“”„«»‹›
# 、。 「」『』【】 and the full-width （），！？：；
CJK_PUNCTUATION = "\u3001\u3002\u300c-\u3011\uff08\uff09\uff0c\uff01\uff1f\uff1a\uff1b"
URL_CHAR = rf"[^\s<>\"'`\[\]{{}}{QUOTES}{CJK_PUNCTUATION}]"
URL = re.compile(rf"\b(?:https?://|ftp://|www\.){URL_CHAR}+")
TRAILING = ".,;:!?*_~\u2026\u2010\u00ad"
# groff (man pages) and some PDF text hyphenate a long URL at a line end: U+2010 HYPHEN (or a
# soft hyphen U+00AD), the line break, then the next line's indentation. Neither hyphen is a
# URL character, so such a break is joined: the row's `value` is the URL without the hyphen,
# line break and indentation, and its span covers the broken text as printed. The only
# entities whose value is not the text at their span.
BREAK_HYPHENS = "\u2010\u00ad"
CONTINUATION = re.compile(rf"\r?\n[^\S\r\n]*(?!https?://|ftp://|www\.)({URL_CHAR}+)")


def _url_end(text: str, s: int, e: int) -> int:
    """`e` less the trailing punctuation that ends a sentence or closes a bracket around the URL:
    any closing bracket (`)`, `⟩`, `〉`, ...: Unicode's closing punctuation) that the URL does not
    open itself (`.../Mercury_(planet)` keeps its own)."""
    while e > s:
        last = text[e - 1]
        if last in TRAILING or (_closing(last) and _opened(text, s, e) < _closed(text, s, e)):
            e -= 1
        else:
            break
    return e


def _closing(c: str) -> bool:
    return unicodedata.category(c) == "Pe"


def _opened(text: str, s: int, e: int) -> int:
    return sum(unicodedata.category(c) == "Ps" for c in text[s:e] if not c.isalnum())


def _closed(text: str, s: int, e: int) -> int:
    return sum(_closing(c) for c in text[s:e] if not c.isalnum())


def _urls(text: str, language: str) -> Iterator[Found]:
    if "://" not in text and "www." not in text:
        return
    for m in URL.finditer(text):
        pieces = [m.span()]  # the URL as printed, one piece per line
        while text[pieces[-1][1] - 1] in BREAK_HYPHENS and (c := CONTINUATION.match(text, pieces[-1][1])):
            pieces.append(c.span(1))
        # A renderer that prints the URL's own hyphens as U+2010 too (`shared‐mime‐` + break)
        # makes a hyphen at the line end ambiguous: then the URL ends before the break, verbatim.
        inner = [text[ps : pe - 1] for ps, pe in pieces[:-1]] + [text[pieces[-1][0] : pieces[-1][1]]]
        if len(pieces) > 1 and any("\u2010" in piece for piece in inner):
            pieces = pieces[:1]
        s = pieces[0][0]
        while True:  # a continuation that was only a sentence stop is no part of the URL
            e = _url_end(text, s, pieces[-1][1])
            if len(pieces) == 1 or e > pieces[-1][0]:
                break
            pieces.pop()
        if e - s <= len("www.") + 3:
            continue
        if len(pieces) == 1:
            yield s, e, None
        else:
            yield s, e, "".join(text[ps : pe - 1] for ps, pe in pieces[:-1]) + text[pieces[-1][0] : e]


# --- email -----------------------------------------------------------------------------------
# The domain is atomic so `git@github.com:owner/repo.git` (an SSH address) is refused whole
# rather than shortened to something that looks like an email.
EMAIL = re.compile(
    r"(?<![\w.+-])[\w+-]+(?:\.[\w+-]+)*@(?>[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![\w@-]|:[\w/])"
)


def _emails(text: str, language: str) -> Iterator[Found]:
    # Scanned from each `@` rather than over the whole text (the slowest of the patterns on
    # running text otherwise): an address's local part is at most 64 characters and its domain
    # at most 253 (RFC 5321), so the match holding an `@` lies within that window around it.
    end = 0
    at = text.find("@")
    while at != -1:
        if at >= end and (m := EMAIL.search(text, max(end, at - 64), at + 254)) and m.start() < at < m.end():
            end = m.end()
            yield (*m.span(), None)
        at = text.find("@", at + 1)


# --- date ------------------------------------------------------------------------------------
# A date names a day or a month of a year, or a day of a month. Years alone, year ranges,
# quarters, seasons and bare month names are not dates here.
MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
MONTH_ABBR = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
SP = locale_patterns.SP  # spaces inside one entity: no line break, no tab (see there)
# A day is never the end of a version or decimal number (`GNU coreutils 9.1  September 2022`
# is version 9.1, then the month): no digit and point or comma right before it.
DAY = r"(?<!\d[.,])(?:[12]\d|3[01]|0?[1-9])(?!\d)(?:st|nd|rd|th)?"
DAYS = rf"{DAY}(?:{SP}?[-–]{SP}?{DAY})?"  # 9-11 October
YEAR = r"(?:1\d|2[01])\d{2}(?!\d)"
TIME = r"(?:T\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
# Numeric dates read the same in every language docbeam has rules for.
NUMERIC_DATES = [
    rf"(?<![\d.])\d{{4}}([-/.])\d{{2}}\1\d{{2}}{TIME}(?![\d.]\d|\d)",  # 2026-01-15, 2023.07.14, ...T10:15Z
    r"(?<![\d./])\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})(?![\d/]|\.\d)",  # 01/15/2026, 1/2/24
    # dotted day.month.year only zero-padded: `7.9.2009` is a version (CentOS 7.9.2009)
    r"(?<![\d.])\d{2}\.\d{2}\.\d{4}(?![\d.]\d|\d)",  # 15.01.2026
]
ENGLISH_DATES = [
    rf"\b{DAYS}(?:{SP}+of)?{SP}+{MONTH}\b(?:\.?,?{SP}+{YEAR})?",  # 14 October 2025, 3rd of March, 2 Feb
    rf"\b{MONTH}\b\.?{SP}+{DAYS}\b(?:,?{SP}+{YEAR})?",  # March 3, 2026; Feb. 2; June 21st
    rf"\b{MONTH}\b\.?,?{SP}+{YEAR}",  # January 2022
    rf"\b\d{{1,2}}-{MONTH_ABBR}-{YEAR}",  # 14-Mar-2025
]
DATE = re.compile(r"(?=[\dJFMASOND])(?:" + "|".join(NUMERIC_DATES + ENGLISH_DATES) + ")")
NUMERIC_DATE = re.compile(r"(?=\d)(?:" + "|".join(NUMERIC_DATES) + ")")
MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
NUMBER = re.compile(r"\d+")


def _month_days(month: int, year: int | None) -> int:
    return calendar.monthrange(year if year else 2000, month)[1]  # no year: Feb 29 allowed


def _is_real_date(value: str) -> bool:
    """The day exists in its month (no 31 February, no month 13)."""
    head = value.split("T")[0]
    nums = [int(n) for n in NUMBER.findall(head)]
    name = re.search(MONTH, value)
    if name:  # textual: the numbers are days and maybe a year (>= 1000)
        month = MONTHS.index(name.group()[:3].lower()) + 1
        year = next((n for n in nums if n >= 1000), None)
        return all(1 <= d <= _month_days(month, year) for d in nums if d < 1000)
    if len(nums[0:1]) and nums[0] >= 1000:  # year first
        year, month, day = nums
        return 1 <= month <= 12 and 1 <= day <= _month_days(month, year)
    a, b, year = nums
    year = year + 2000 if year < 100 else year
    # day/month or month/day: either reading must be a real date
    return any(1 <= m <= 12 and 1 <= d <= _month_days(m, year) for d, m in ((a, b), (b, a)))


def _dates(text: str, language: str) -> Iterator[Found]:
    """English: the patterns above. Another language: numeric dates and its own written ones
    (locale_patterns.py), never English month names (German `Mai`, Spanish `mar`, Turkish `May`
    are not English). A language without rules here: numeric dates only."""
    if language == "en":
        for m in DATE.finditer(text):
            if _is_real_date(m.group()):
                yield (*m.span(), None)
        return
    for m in NUMERIC_DATE.finditer(text):
        if _is_real_date(m.group()):
            yield (*m.span(), None)
    if rules := locale_patterns.rules(language):
        for s, e in locale_patterns.dates(text, rules):
            yield s, e, None


# --- money -----------------------------------------------------------------------------------
SYMBOL = r"(?:(?:US|AU|NZ|HK|CA|NT|MX|[ACSR])\$|\$|€|£|¥|₹|₩|₽|₺|₪|฿|₫|₱|₦|₴|₸)"
CODE = r"(?:USD|EUR|GBP|JPY|CNY|RMB|CHF|CAD|AUD|NZD|HKD|SGD|INR|KRW|BRL|MXN|SEK|NOK|DKK|PLN|ZAR|RUB|TRY|AED|SAR|Rs\.?)"
# 1,250.00 | 250'000 | 1.234,56 | 3,20 | 12.5 | 12 (US, Swiss and continental separators)
AMOUNT = (
    r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:['’]\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+,\d{1,2}"
    r"|\d+,\d{1,2}(?![\d,])|\d+(?:\.\d+)?)"
)
SCALE = rf"(?:{SP}?(?:thousand|million|billion|trillion|lakh crore|crore|lakh|bn|tn|mn|[kKmMbB])\b)?"
CURRENCY_WORD = r"(?:dollars|euros|yen|yuan|francs|rupees|pounds sterling)\b"
MONEY = re.compile(
    r"(?=[\d$€£¥₹₩₽₺₪฿₫₱₦₴₸A-Z])(?:"
    + "|".join(
        [
            rf"(?<![\w$]){SYMBOL}{SP}?{AMOUNT}{SCALE}(?![\w}}\]])",  # $5.99, ¥1.3 trillion, US$2 billion
            rf"\b{CODE}{SP}?{AMOUNT}{SCALE}",  # EUR 3.5 billion, Rs 1,200
            rf"(?<![\w.,]){AMOUNT}{SCALE}{SP}?(?:\b{CODE}\b|{SYMBOL}|{CURRENCY_WORD})",  # 4,000 USD, 45,90 €
        ]
    )
    + ")"
)


# Shell, awk and Perl write `$0`, `$1`, ... for positional parameters and fields (`$1 ~ /r/`,
# `shift` sets `$1` to `$2`). Those texts also write `$` before names (`$HOME`, `$NF`, `${x}`,
# `$#`, `$@`), which prices never do (`$US` aside): in such a text a bare `$` and a plain
# integer is a parameter, and a dollar amount is money only when written like one (cents,
# thousands separators or a scale: `$4.99`, `$1,200`, `$2 billion`).
SIGIL = re.compile(r"\$(?:(?!(?:US|CA|AU|NZ|HK|SG|MX)\b)[A-Za-z_]|[{(@#?*!])")
BARE_INTEGER = re.compile(r"\$\d+")


def _money(text: str, language: str) -> Iterator[Found]:
    """The language's own amounts first (`1 500,50 €` in French is one amount, not `500,50 €`),
    then the symbols and ISO codes every language writes (`$4.99`, `EUR 3.5 billion`); an
    overlap keeps the first."""
    if language != "en" and (rules := locale_patterns.rules(language)):
        for s, e in locale_patterns.money(text, rules):
            yield s, e, None
    sigils = None  # whether the text uses `$` as a sigil; looked up on the first bare `$N`
    for m in MONEY.finditer(text):
        if BARE_INTEGER.fullmatch(m.group()):
            if sigils is None:
                sigils = SIGIL.search(text) is not None
            if sigils:
                continue
        yield (*m.span(), None)


# --- phone -----------------------------------------------------------------------------------
PHONE = re.compile(
    r"(?=[\d+(])(?<![\w/#§.,+-])"
    r"(?:(?:\+|00)\d{1,3}[ .-]?)?"  # international prefix
    r"(?:\(\d{1,4}\)[ .-]?)?"  # area code in parentheses
    r"\d{1,8}(?:[ .-]\d{1,8}){0,5}"
    r"(?![\w/]|[.,-]\d)"
)
INTERNATIONAL = re.compile(r"(?:\+|00)[1-9]\d{0,2}[ .(-]")
NANP = re.compile(r"(?:1([ .-]))?(?:\([2-9]\d\d\) ?|[2-9]\d\d([ .-]))[2-9]\d\d([ .-])\d{4}")
ANNOUNCED = re.compile(
    r"(?i:\b(?:tel|tél|telephone|phone|telefon|call(?:\s+us)?(?:\s+on|\s+at)?|fax|mobile?|mob|cell|hotline|whatsapp|ph)"
    r"\.?(?:\s*\([^)]{0,12}\))?\s*[:.]?\s*$)"
    r"|\b[TFM]:\s*$"
)
YEAR_RANGE = re.compile(r"(?:1[5-9]|20)\d\d\s?[-–]\s?(?:1[5-9]|20)\d\d")


def _is_nanp(value: str) -> bool:
    m = NANP.fullmatch(value)
    if not m:
        return False
    seps = {g for g in m.groups()[1:] if g is not None}
    return len(seps) <= 1  # one separator style: 415-555-0134, never 252.227-7013


def _phones(text: str, language: str) -> Iterator[Found]:
    for m in PHONE.finditer(text):
        value = m.group()
        if not 7 <= sum(ch.isdigit() for ch in value) <= 15 or YEAR_RANGE.fullmatch(value):
            continue
        if INTERNATIONAL.match(value) or _is_nanp(value) or ANNOUNCED.search(text, max(0, m.start() - 30), m.start()):
            yield (*m.span(), None)


FINDERS: list[tuple[str, Callable[[str, str], Iterator[Found]]]] = [
    ("url", _urls),
    ("email", _emails),
    ("date", _dates),
    ("money", _money),
    ("phone", _phones),
]
TYPES = [kind for kind, _ in FINDERS]


def find_entities(text: str, language: str = DEFAULT_LANGUAGE) -> list[tuple[str, str, int, int]]:
    """(type, value, start, end), in text order, without overlaps, by the rules of `language` (an
    ISO 639-1 code: a document's `doc.language or DEFAULT_LANGUAGE`; `auto` reads as the
    default). `value` is `text[start:end]`,
    except for a URL joined across a hyphenated line break (see BREAK_HYPHENS)."""
    language = DEFAULT_LANGUAGE if language == "auto" else language
    claimed = bytearray(len(text))  # 1 where a higher-priority type already took the character
    found = []
    for kind, finder in FINDERS:
        for s, e, value in finder(text, language):
            if claimed.find(1, s, e) == -1:
                claimed[s:e] = b"\x01" * (e - s)
                found.append((kind, text[s:e] if value is None else value, s, e))
    return sorted(found, key=lambda f: f[2])
