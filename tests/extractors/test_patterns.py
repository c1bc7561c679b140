"""Entity patterns against the hand-labelled sets: precision per type, and the numbers that
naive phone patterns took for phones (issue: 500 `entity:phone` rows, nearly all year ranges)."""

import pytest

from docbeam.pipeline.extractors.patterns import TYPES, find_entities
from tests.extractors.labelled import ENTITY_SETS, entity_examples, parse_marked, score_entities


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
