"""Entity patterns against the hand-labelled sets: precision per type, and the numbers that
naive phone patterns took for phones (issue: 500 `entity:phone` rows, nearly all year ranges)."""

import re
import unicodedata

import pytest

from docbeam.pipeline.extractors.patterns import TYPES, find_entities
from tests import machine_files
from tests.extractors.labelled import DATA, ENTITY_SETS, entity_examples, parse_marked, score_entities


@pytest.fixture(scope="module")
def scores():
    return score_entities(entity_examples(), find_entities)


def test_labelled_sets_cover_every_type(scores):
    assert set(scores) == set(TYPES)
    for kind, c in scores.items():
        assert c["tp"] + c["fn"] >= 20, f"{kind}: too few labelled examples to measure precision"


@pytest.mark.parametrize("kind", TYPES)
def test_precision_per_type(scores, kind):
    c = scores[kind]
    assert c["precision"] >= 0.95, f"{kind}: precision {c['precision']:.3f}, false: {c['false']}"


@pytest.mark.parametrize("kind", TYPES)
def test_recall_per_type(scores, kind):
    c = scores[kind]
    assert c["recall"] >= 0.9, f"{kind}: recall {c['recall']:.3f}, missed: {c['missed']}"


NEVER_PHONES = [
    # copyright year ranges
    "Copyright (c) 2003-2004, The Regents of the University of California.",
    "Copyright © 1995-2022 Python Software Foundation",
    "(C) 2019 - 2024 Northwind Labs; 2010-2011, 2015 Bartholomew Ng; 1988–1997 Sam Leffler",
    # version numbers
    "Linux 2.6.32-754.el6.x86_64, release 4.2.0-rc.1, 1.0.0-beta.2, build 19045.3803",
    "CentOS 7.9.2009, Chrome 122.0.6261.94, libcudnn8 8.9.7.29-1+cuda12.2, 5.15.0-1053-azure",
    # section numbers and legal citations
    "DFARS 252.227-7013(c)(1)(ii), FAR 52.227-19, 48 CFR 227.7202-3 and 29 CFR 1910.1200",
    "Section 4.2.1, clause 14.1.2, § 1201(a)(2), Pub. L. 105-304, Case No. 1:21-cv-01234",
    "Treas. Reg. § 1.501(c)(3)-1(d)(2); section 3.4.12 supersedes sections 2.1 through 2.7",
    # other numbers written with separators
    "CVE-2021-44228; ISBN 978-0-596-52068-7; Boston, MA 02110-1301; 4111 1111 1111 1111",
    "192.168.10.254:8080; pages 1123-1145; 2003 2004 2005 2006; 1024 2048 4096 8192",
]


@pytest.mark.parametrize("text", NEVER_PHONES)
def test_year_ranges_versions_and_sections_are_never_phones(text):
    assert [f for f in find_entities(text) if f[0] == "phone"] == []


def test_no_year_range_version_or_section_in_the_labelled_sets_is_a_phone():
    # every phone the patterns find in the labelled sets is a labelled phone (no false phones at all)
    for ex in entity_examples():
        gold = {(s, e) for k, s, e in ex["gold"] if k == "phone"}
        found = {(s, e) for k, _, s, e in find_entities(ex["text"]) if k == "phone"}
        assert found <= gold, (ex["id"], [ex["text"][s:e] for s, e in found - gold])


def test_issue_examples():
    text = "Sales hit ¥1.3 trillion in January 2022; the next report is due 2 February. Tel: +44 20 7946 0958"
    assert [(k, v) for k, v, _, _ in find_entities(text)] == [
        ("money", "¥1.3 trillion"),
        ("date", "January 2022"),
        ("date", "2 February"),
        ("phone", "+44 20 7946 0958"),
    ]


def test_markup_parser():
    text, gold = parse_marked("Call [[phone:+1 212 555 0100]] by [[date:May 2]].")
    assert text == "Call +1 212 555 0100 by May 2."
    assert [(k, text[s:e]) for k, s, e in gold] == [("phone", "+1 212 555 0100"), ("date", "May 2")]
    assert ENTITY_SETS  # the sets exist and parse (entity_examples above)


# --- man pages (tests/extractors/data/man/README.md says how each text was made) ------------
MAN = DATA / "man"


def _of(kind: str, text: str) -> list[tuple[str, int, int]]:
    return [(v, s, e) for k, v, s, e in find_entities(text) if k == kind]


def test_url_hyphenated_at_a_man_page_line_break_is_found_whole():
    # groff breaks a URL with U+2010 HYPHEN + newline + indentation; the hyphen is no URL character
    text = (MAN / "date.1.w40.txt").read_text()
    urls = _of("url", text)
    assert [v for v, _, _ in urls] == [
        "https://www.gnu.org/software/coreutils/",
        "https://translationproject.org/team/",
        "https://gnu.org/licenses/gpl.html",
        "https://www.gnu.org/software/coreutils/date",
    ]
    # the span covers the broken text as printed: from the scheme to the end of the continuation
    v, s, e = urls[2]
    assert text[s:e] == "https://gnu.org/li\u2010\n       censes/gpl.html"
    assert text[e] == ">"
    # as the issue quotes it (an older page, `http`), at the end of a sentence
    issue = "GPL version 3 or later http://gnu.org/li\u2010\n       censes/gpl.html."
    assert _of("url", issue) == [("http://gnu.org/licenses/gpl.html", 23, len(issue) - 1)]


def test_url_hyphenated_across_lines_in_running_text_drops_the_sentence_stop():
    text = (MAN / "bash.1.bugs.txt").read_text()
    assert [v for v, _, _ in _of("url", text)] == [
        "ftp://ftp.gnu.org/pub/gnu/bash/",
        "http://git.savannah.gnu.org/cgit/bash.git/snapshot/bash-master.tar.gz",
    ]


def test_url_at_80_columns_is_unchanged_and_verbatim():
    text = (MAN / "date.1.w80.txt").read_text()
    urls = _of("url", text)
    assert [v for v, _, _ in urls][2] == "https://gnu.org/licenses/gpl.html"
    assert all(text[s:e] == v for v, s, e in urls)


def test_url_joined_only_where_the_hyphen_is_a_break():
    # a renderer that prints every hyphen as U+2010 (groff without Debian's patch): a hyphen at
    # the line end may be the URL's own, so the URL ends before the break, verbatim
    text = "see https://www.freedesktop.org/wiki/Specifications/shared\u2010mime\u2010\n    info\u2010spec/ for more"
    (v, s, e) = _of("url", text)[0]
    assert v == text[s:e] == "https://www.freedesktop.org/wiki/Specifications/shared\u2010mime"
    # no indentation-only continuation: a hyphen before a blank line or another URL is not joined
    assert [v for v, _, _ in _of("url", "https://a.example/x\u2010\n\nnext")] == ["https://a.example/x"]
    assert [v for v, _, _ in _of("url", "https://a.example/x\u2010\n  https://b.example/y")] == [
        "https://a.example/x",
        "https://b.example/y",
    ]


@pytest.mark.parametrize("close", ["\u2019", "\u201d", "\u00bb", "'", '"', "\u203a", "\u300d", "\u3002", ")", "."])
def test_closing_quotes_and_punctuation_never_end_a_url(close):
    # from a PDF manual of the Shared MIME-info database: `...shared-mime-info’`
    opening = {"\u2019": "\u2018", "\u201d": "\u201c", "\u00bb": "\u00ab ", "\u203a": "\u2039", "\u300d": "\u300c"}
    text = f"see {opening.get(close, '')}https://www.freedesktop.org/wiki/Software/shared-mime-info{close} for the spec"
    assert [v for v, _, _ in _of("url", text)] == ["https://www.freedesktop.org/wiki/Software/shared-mime-info"]


def test_dates_never_span_a_line_break():
    text = (MAN / "date.1.w80.txt").read_text()
    dates = _of("date", text)
    assert all("\n" not in v for v, _, _ in dates), [v for v, _, _ in dates if "\n" in v]
    # `Example: Mon,  14  Aug\n\t      2006 02:34:56 -0600`: the day of the month on its line only
    assert "14  Aug" in [v for v, _, _ in dates]
    # a date inside one line is still found whole
    assert "2006-08-14" in [v for v, _, _ in dates]
    assert [v for v, _, _ in _of("date", "It was 14 Aug 2006, not\n14 Aug\n 2006.")] == ["14 Aug 2006", "14 Aug"]


@pytest.mark.parametrize("name", ["mawk.1.fields.txt", "dash.1.shift.txt"])
def test_positional_parameters_are_not_money(name):
    # `$0`, `$1`, `$2` in a text that uses `$` before names too (`$NF`, `$#`): shell/awk parameters
    assert _of("money", (MAN / name).read_text()) == []


def test_dollar_amounts_stay_money():
    prices = "Pricing: Starter $9/month, Team $29/user; a refund of $0.50 or $1,250 or $3k."
    assert [v for v, _, _ in _of("money", prices)] == ["$9", "$29", "$0.50", "$1,250", "$3k"]
    # a sigil-using text keeps amounts written as money: cents, thousands, a scale
    shell = "Set $HOME first. The plan costs $4.99 a month, or $1,200 a year, or $2 billion in all."
    assert [v for v, _, _ in _of("money", shell)] == ["$4.99", "$1,200", "$2 billion"]


# --- dates and money per language ------------------------------------------------------------
# News-like sentences written for these tests by a fluent reader of each language (not taken
# from a corpus): (language, sentence, the dates and amounts in it, in text order).
SENTENCES = [
    (
        "de",
        "Am 14. März 2024 fuhren rund 200 Pendler mit der BahnCard nach München; die Fahrt kostete "
        "15 Euro, der Zuschlag 15,50 €.",
        [("date", "14. März 2024"), ("money", "15 Euro"), ("money", "15,50 €")],
    ),
    (
        "de",
        "Der Vertrag läuft seit dem 1. Oktober und endet im Dezember 2025 (Stand: 3. Okt. 2024).",
        [("date", "1. Oktober"), ("date", "Dezember 2025"), ("date", "3. Okt. 2024")],
    ),
    (
        "de",
        "Die Stadt investiert 2,5 Millionen Euro in neue Radwege; die Sitzung vom 14.03.2024 wurde vertagt.",
        [("money", "2,5 Millionen Euro"), ("date", "14.03.2024")],
    ),
    (
        "fr",
        "Le 14 mars 2024, le ticket de métro est passé à 15,50 € à Paris.",
        [("date", "14 mars 2024"), ("money", "15,50 €")],
    ),
    (
        "fr",
        "La mairie a voté un budget de 1 500 000 euros en janvier 2024, contre 1\u202f200 € l'an passé.",
        [("money", "1 500 000 euros"), ("date", "janvier 2024"), ("money", "1\u202f200 €")],
    ),
    (
        "es",
        "El 14 de marzo de 2024 el Gobierno aprobó una ayuda de 200 euros por familia.",
        [("date", "14 de marzo de 2024"), ("money", "200 euros")],
    ),
    (
        "es",
        "Las obras empezarán en septiembre de 2025; el contrato se firma el 2 de mayo por 15,50 €.",
        [("date", "septiembre de 2025"), ("date", "2 de mayo"), ("money", "15,50 €")],
    ),
    (
        "tr",
        "Bakanlık, 14 Mart 2024'te yaptığı açıklamada bilet fiyatının 15 TL'ye yükseldiğini duyurdu.",
        [("date", "14 Mart 2024"), ("money", "15 TL")],
    ),
    (
        "tr",
        "İstanbul'da simit fiyatı Ağustos 2024 itibarıyla ₺15,50 oldu; toplantılar 29 Ekim ve 10 Kasım "
        "tarihlerinde yapılacak.",
        [("date", "Ağustos 2024"), ("money", "₺15,50"), ("date", "29 Ekim"), ("date", "10 Kasım")],
    ),
    (
        "tr",
        "ŞİRKET 2,5 MİLYAR TL YATIRIM YAPACAK; 1 OCAK 2025'TEN İTİBAREN 250 TÜRK LİRASI ZAM GELECEK. KASIM 2024.",
        [("money", "2,5 MİLYAR TL"), ("date", "1 OCAK 2025"), ("money", "250 TÜRK LİRASI"), ("date", "KASIM 2024")],
    ),
    (
        "ja",
        "2024年3月14日、東京都は入場料を1,500円に引き上げると発表した。",
        [("date", "2024年3月14日"), ("money", "1,500円")],
    ),
    (
        "ja",
        "同社は3月14日に約2億円の損失を計上し、２０２４年４月１日に営業を再開した。",
        [("date", "3月14日"), ("money", "2億円"), ("date", "２０２４年４月１日")],
    ),
]


@pytest.mark.parametrize("language,text,expected", SENTENCES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SENTENCES)])
def test_dates_and_money_in_the_documents_language(language, text, expected):
    found = find_entities(text, language)
    assert [(k, v) for k, v, _, _ in found if k in ("date", "money")] == expected
    assert all(text[s:e] == v for _, v, s, e in found)


@pytest.mark.parametrize("language,text,expected", SENTENCES, ids=[f"{s[0]}-{i}" for i, s in enumerate(SENTENCES)])
def test_english_rules_find_no_written_date_of_another_language(language, text, expected):
    # with English rules a written German/French/... date is no date (and none is made up from
    # its parts); only the numeric dates every language shares remain
    dates = [v for k, v, _, _ in find_entities(text, "en") if k == "date"]
    assert dates == [v for k, v in expected if k == "date" and v[0].isascii() and v.replace(".", "").isdigit()]


def test_the_language_decides_how_an_amount_reads():
    text = "La mairie a voté un budget de 1 500 000 euros, contre 1\u202f200 € l'an passé."
    # English rules read French digit groups as separate numbers: a wrong, shorter amount
    assert [v for k, v, _, _ in find_entities(text, "en") if k == "money"] == ["000 euros", "200 €"]
    assert [v for k, v, _, _ in find_entities(text, "fr") if k == "money"] == ["1 500 000 euros", "1\u202f200 €"]


def test_another_languages_rules_skip_english_month_names_and_check_the_day():
    # German rules: `Mai`/`Okt.` are months, `May 3, 2024` is not German; 31 February never exists
    text = "Termine: 3. Mai 2024, May 3, 2024 und 31. Februar 2024."
    assert [v for k, v, _, _ in find_entities(text, "de") if k == "date"] == ["3. Mai 2024"]
    # abbreviated names count only in a full date: Spanish `mar` is also the sea
    assert [v for k, v, _, _ in find_entities("Vimos el 3 mar 2024 y 3 mar azul.", "es") if k == "date"] == [
        "3 mar 2024"
    ]


def test_a_language_without_rules_keeps_the_language_independent_patterns():
    text = "Il 14 marzo 2024 il biglietto costava €15,50 (fattura 2024-03-14)."
    found = [(k, v) for k, v, _, _ in find_entities(text, "it")]
    assert found == [("money", "€15,50"), ("date", "2024-03-14")]
    assert find_entities(text, "auto") == find_entities(text, "en")


def test_entities_extractor_reads_the_documents_language():
    from docbeam.pipeline.core.records import Document
    from docbeam.pipeline.extractors.entities import Entities

    text = SENTENCES[0][1]
    rows = Entities().text_rows(Document(uid="u", doc_id="d", source="s", row=0, text=text, language="de"))
    assert [(r["kind"], r["value"]) for r in rows] == [("entity:date", "14. März 2024")] + [
        ("entity:money", v) for v in ("15 Euro", "15,50 €")
    ]
    undetermined = Entities().text_rows(Document(uid="u", doc_id="d", source="s", row=0, text=text))
    assert [r["value"] for r in undetermined] == ["15,50 €"]  # English rules


def test_every_language_with_rules_is_tested_and_listed_for_the_flag():
    from docbeam.pipeline.core.languages import PARTS
    from docbeam.pipeline.extractors.locale_patterns import LANGUAGES

    assert {s[0] for s in SENTENCES} == set(LANGUAGES)
    assert PARTS["date and money patterns"] == LANGUAGES | {"en"}


def test_a_tab_separates_columns_not_the_parts_of_a_date():
    """A new user's `ls` man page footer gave `1\t\tSeptember 2022` (from "coreutils 9.1")."""
    found = [(k, v) for k, v, *_ in find_entities("GNU coreutils 9.1\t\tSeptember 2022\t\tLS(1)")]
    assert found == [("date", "September 2022")]
    assert [v for _, v, *_ in find_entities("Am 14.\u00a0März 2024 um 15\u00a0€.", "de")] == [
        "14.\u00a0März 2024",
        "15\u00a0€",
    ]


# --- issue 36: a version number is never a day; a URL never ends in a bracket it does not open
def test_a_version_number_is_never_a_day():
    footer = "GNU coreutils 9.1  September 2022   CP(1)"
    assert _of("date", footer) == [("September 2022", footer.index("September"), footer.index(" CP") - 2)]
    assert [v for v, _, _ in _of("date", "Released in version 2.14 May 2021 and again on 3 May 2021.")] == [
        "May 2021",
        "3 May 2021",
    ]
    # a day after a comma and a space is a day: `Version 2.3, 4 May 2021`
    assert [v for v, _, _ in _of("date", "Version 2.3, 4 May 2021")] == ["4 May 2021"]
    german = [
        v for k, v, _, _ in find_entities("Version 9.1. März 2024 erschien am 14. März 2024.", "de") if k == "date"
    ]
    assert german == ["März 2024", "14. März 2024"]


def test_a_url_does_not_end_in_a_closing_bracket_it_does_not_open():
    text = (
        "bug tracker ⟨https://debbugs.gnu.org/cgi/pkgreport.cgi?package=grep⟩ and "
        "〈https://example.org/a〉 (see https://en.wikipedia.org/wiki/Mercury_(planet)) "
        "or (https://example.org/b)."
    )
    assert [v for v, _, _ in _of("url", text)] == [
        "https://debbugs.gnu.org/cgi/pkgreport.cgi?package=grep",
        "https://example.org/a",
        "https://en.wikipedia.org/wiki/Mercury_(planet)",
        "https://example.org/b",
    ]


def test_real_man_pages_give_no_day_from_a_version_and_no_url_ending_in_a_bracket():
    from tests.benchmarks.extraction_defects import URL_MACRO, VERSIONED_FOOTER

    pages = machine_files.man_pages(10) + [("date.1.w80.txt", (MAN / "date.1.w80.txt").read_text())]
    # and pages with a version before the footer's date, or URLs in angle brackets (`.UR`)
    pages += machine_files.find_man_pages(4, wanted=VERSIONED_FOOTER.search)
    pages += machine_files.find_man_pages(4, wanted=URL_MACRO.search)
    # as `col -b` prints them (tabs), and with spaces where the tabs were (`col -bx`)
    for page, text in [(p, t) for p, raw in pages for t in (raw, raw.expandtabs())]:
        for kind, value, s, _ in find_entities(text):
            if kind == "date":
                assert not re.search(r"\d[.,]\Z", text[max(0, s - 2) : s]), (page, value)
            if kind == "url":
                opened = sum(unicodedata.category(c) == "Ps" for c in value)
                closed = sum(unicodedata.category(c) == "Pe" for c in value)
                assert unicodedata.category(value[-1]) != "Pe" or closed <= opened, (page, value)
