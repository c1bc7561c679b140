"""Date and money patterns of a language other than English, built from CLDR (babel's data).

Nothing here is a word list written by hand: the month names (wide and abbreviated, format
and stand-alone), the order and the literal words of written dates (CLDR's date skeletons:
German `d. MMMM y`, Spanish `d 'de' MMMM 'de' y`, Japanese `y年M月d日`), the decimal and
grouping separators, the currency symbols and names (singular and plural) and the scale words
(`Millionen`, `milliards`, `milyar`, `万`) all come from the language's CLDR locale. The one
exception is TURKISH_LIRA_ABBREVIATION below, which CLDR lacks.

Abbreviated month names count only in a full date (day, month and year): alone they are
ordinary words too often (Spanish `mar` is the sea, Turkish `Ara` "between", `Kas` "muscle").
Like the English patterns, a date or an amount never spans a line break.
Pure: no Beam, no model. babel is imported on the first document of such a language.
"""

import calendar
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from docbeam.pipeline.extractors.stopwords import fold

# The codes whose patterns are built here and tested on real sentences (tests/extractors/
# test_patterns.py); English has its own hand-tuned patterns in patterns.py.
LANGUAGES = frozenset({"de", "es", "fr", "ja", "tr"})
# Languages written without spaces: a name or number may touch the next word (`1,500円で`).
SPACELESS = frozenset({"ja"})
# Currencies whose CLDR names and symbols each language's money patterns know (symbols and
# ISO codes of many more are language-independent, in patterns.py).
CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF", "TRY", "CNY")
# Turkish writes the lira `TL` (Türk lirası; the abbreviation the Central Bank and Law 5083
# use), which CLDR does not list beside `₺` and `TRY`.
TURKISH_LIRA_ABBREVIATION = {"tr": ("TL",)}
# CLDR skeletons of written dates, most specific first (a regex alternation takes the first
# alternative that matches at a position, so the full date wins over its parts).
FULL = ("yMMMMd", "yMMMd")
PARTIAL = ("MMMMd", "yMMMM")
# An entity never spans a line break (`Mon, 14 Aug` + newline + `2006` in a man page is two
# lines, not one date), nor a tab (a man page's footer `coreutils 9.1<tab><tab>September 2022`
# is columns, not `1 September 2022`): the spaces inside one are spaces, no-break ones included
# (CLDR writes those). patterns.py uses the same.
SP = r"[ \u00a0\u2007\u202f]"
FIELD = re.compile(r"'(?:[^']|'')*'|([a-zA-Z])\1*|.", re.S)


@dataclass(frozen=True)
class LocaleRules:
    language: str
    date: re.Pattern  # written dates that start with a digit (`14. März 2024`, `2024年3月14日`)
    month_year: re.Pattern | None  # those that start with a month name and end with the year
    lookback: int  # the most characters a month_year date spans before its year
    months: dict[str, int]  # folded month name (without a trailing dot) -> 1..12
    money: re.Pattern


def _fold(name: str, language: str) -> str:
    return fold(name, language).rstrip(".")  # Turkish-aware: KASIM is kasım, NİSAN is nisan


def _alternation(words: set[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=lambda w: (-len(w), w)))


def _month_names(locale, language: str, widths: tuple[str, ...]) -> dict[str, int]:
    names: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in widths:
            for month, name in locale.months[context][width].items():
                names[_fold(name, language)] = month
    return names


def _skeleton_regex(pattern: str, i: int, month_names: str, language: str) -> str:
    """A CLDR date pattern (`d. MMMM y`) as a regex with groups d{i}, m{i}, y{i}."""
    out = []
    tokens = [m.group() for m in FIELD.finditer(pattern)]
    for k, tok in enumerate(tokens):
        if tok[0] == "d":
            out.append(rf"(?<!\d[.,])(?P<d{i}>\d{{1,2}})(?!\d)")
        elif tok[0] in "ML" and len(tok) <= 2:
            out.append(rf"(?P<m{i}>\d{{1,2}})(?!\d)")
        elif tok[0] in "ML":
            out.append(rf"(?P<m{i}>(?i:{month_names}))\.?")
        elif tok[0] == "y":
            out.append(rf"(?P<y{i}>\d{{4}})(?!\d)")
        elif tok.startswith("'"):
            out.append(re.escape(tok[1:-1].replace("''", "'")) if tok != "''" else "'")
        elif tok.isspace():
            after_dot = k and tokens[k - 1] == "."
            out.append(f"{SP}*" if after_dot else f"{SP}+")
        else:
            out.append(re.escape(tok))
    body = "".join(out)
    if language not in SPACELESS:
        body = (r"(?<!\w)" if tokens[0][0] not in "dy" else r"(?<![\w.])") + body
        body += r"(?!\w)" if tokens[-1][0] not in "dy" else ""
    else:
        body = r"(?<!\d)" + body
    return body


def _scale_words(locale) -> set[str]:
    words = set()
    for style in ("long", "short"):
        for by_plural in locale.compact_decimal_formats.get(style, {}).values():
            for pattern in by_plural.values():
                word = re.sub(r"[0#]+|'", "", str(getattr(pattern, "pattern", pattern))).strip(" \xa0")
                # single letters (`k`, `M`, `B`) are too often something else after a number
                if len(word) >= 2 or (word and not word.isascii()):
                    words.add(word.replace("\xa0", " "))
    return words


def _amount(locale) -> str:
    symbols = locale.number_symbols.get("latn", locale.number_symbols)
    dec, group = re.escape(symbols["decimal"]), symbols["group"]
    # French groups thousands with a narrow no-break space; people type a plain or no-break one
    group = f"[{re.escape(group)} \xa0\u202f]" if group.isspace() else re.escape(group)
    # never stops before a separator and a digit: `$1,250.00` in a German text is no `$1`
    return rf"(?:\d{{1,3}}(?:{group}\d{{3}})+(?:{dec}\d{{1,2}})?|\d+(?:{dec}\d{{1,2}})?)(?!\d|[.,'\u2019]\d)"


def _first_char(letters: set[str]) -> str:
    r"""A lookahead for the characters a match can start with: a digit or one of `letters` as
    written or capitalised. Every other position fails at once (the English patterns'
    `(?=[\dJFMASOND])` do the same), which keeps the scan over running text fast."""
    cased = {c for letter in letters for c in (letter, letter.upper()) if len(c) == 1}
    return r"(?=[\d" + "".join(re.escape(c) for c in sorted(cased)) + "])"


@cache
def rules(language: str) -> LocaleRules | None:
    """The language's date and money patterns, or None for a language without them here."""
    if language not in LANGUAGES:
        return None
    from babel import Locale
    from babel.numbers import get_currency_name, get_currency_symbol

    locale = Locale.parse(language)
    wide = _month_names(locale, language, ("wide",))
    every = {**_month_names(locale, language, ("abbreviated",)), **wide}
    # (pattern, month names) once each: German writes `d. MMMM y` and `d. MMM y` alike
    skeletons = dict.fromkeys(
        (locale.datetime_skeletons[sk].pattern, _alternation(set(every) if sk in FULL else set(wide)))
        for sk in FULL + PARTIAL
    )
    # A date that starts with a month name and ends with the year (`März 2024`, `marzo de 2024`)
    # is looked for back from each four-digit number, so the scan over the whole text starts
    # only at digits: a scan that could start at any month's initial stops at most letters of a
    # French or Spanish text (their month names are lower-case), about 3x slower.
    regexes = [_skeleton_regex(p, i, n, language) for i, (p, n) in enumerate(skeletons)]
    year_last = [rx + r"\Z" for (p, _), rx in zip(skeletons, regexes, strict=True) if p[0] not in "dy" and p[-1] == "y"]
    scanned = [rx for (p, _), rx in zip(skeletons, regexes, strict=True) if p[0] in "dy" or p[-1] != "y"]
    starts = {name[0] for months in locale.months["format"].values() for name in months.values()}
    first = _first_char(starts) if any(p[0] not in "dy" and p[-1] != "y" for p, _ in skeletons) else r"(?=\d)"
    month_year = re.compile("|".join(year_last)) if year_last else None
    if month_year:  # a lone four-digit number, last: where a month name may end before it
        scanned.append(r"(?<!\d)(?P<year>\d{4})(?!\d)")
    date = re.compile(first + "(?:" + "|".join(scanned) + ")")

    symbols, names = set(TURKISH_LIRA_ABBREVIATION.get(language, ())), set[str]()
    for code in CURRENCIES:
        symbols.add(get_currency_symbol(code, locale))
        # the display name and each plural form (Euro / Euro, euro / euros, 日本円 / 円)
        names.update(get_currency_name(code, count, locale) for count in (None, 1, 2, 5, 1.5))
    symbols -= set(CURRENCIES)  # an ISO code is a symbol where CLDR has none: patterns.py has those
    amount = _amount(locale)
    scale = rf"(?:{SP}?(?i:{_alternation(_scale_words(locale))}))?"
    end = "" if language in SPACELESS else r"(?!\w)"
    start = r"(?<![\d.,])" if language in SPACELESS else r"(?<![\w.,])"
    money = re.compile(
        _first_char({sym[0] for sym in symbols})
        + rf"(?:{start}(?:{_alternation(symbols)}){SP}?{amount}{scale}{end}"  # ₺15,50
        rf"|{start}{amount}{scale}{SP}?(?:(?i:{_alternation(names)})|{_alternation(symbols)}){end})"  # 15 Euro, 15,50 €
    )
    lookback = max(map(len, every)) + 24  # the name, a dot, spaces and a word such as `de`
    return LocaleRules(language, date, month_year, lookback, every, money)


def _exists(m: re.Match, r: LocaleRules) -> bool:
    """The date a match names exists (a known month, no 31 February, a year 1000-2199)."""
    got = {k[0]: v for k, v in m.groupdict().items() if v is not None}
    month = int(got["m"]) if got["m"].isdigit() else r.months.get(_fold(got["m"], r.language))
    if month is None or not 1 <= month <= 12:
        return False
    year = int(got["y"]) if "y" in got else None
    if year is not None and not 1000 <= year <= 2199:
        return False
    return "d" not in got or 1 <= int(got["d"]) <= calendar.monthrange(year or 2000, month)[1]


def dates(text: str, r: LocaleRules) -> Iterator[tuple[int, int]]:
    """Spans of the written dates of `r`'s language that exist. One scan over the digits: a
    date that starts with one, or a four-digit number that a month name may precede."""
    for m in r.date.finditer(text):
        if m.lastgroup != "year":
            if _exists(m, r):
                yield m.span()
        # the regex ends in \Z: the leftmost match in the window that ends at this year
        elif (
            r.month_year and (y := r.month_year.search(text, max(0, m.start() - r.lookback), m.end())) and _exists(y, r)
        ):
            yield y.span()


def money(text: str, r: LocaleRules) -> Iterator[tuple[int, int]]:
    for m in r.money.finditer(text):
        yield m.span()
