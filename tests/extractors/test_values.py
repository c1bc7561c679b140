"""Extraction values are text a person reads (issue 36): whitespace collapsed and words
hyphenated at a line end whole (the rule PDFs are cleaned with, ingest/hyphens.py), while the
span stays the document's text as found: value == readable(text[start:end]), for every kind."""

import re

import pytest

from docbeam.pipeline.extractors.base import row
from docbeam.pipeline.extractors.keyphrases import candidates
from docbeam.pipeline.extractors.values import readable
from docbeam.pipeline.ingest.hyphens import join_hyphens
from tests import machine_files

# What no value may hold: a run of whitespace, a line break or tab, a word broken at a line end
LAYOUT = re.compile(r"\s\s|[\n\r\t\f]|\w[-\u2010\u00ad]\s+\w")


def test_a_value_has_its_whitespace_collapsed():
    assert readable("GNU  coreutils\t9.1\n   manual ") == "GNU coreutils 9.1 manual"


def test_groff_hyphen_at_a_line_end_joins_the_word():
    # groff prints its own hyphenation as U+2010, then the line break and the next line's indent
    assert readable("the behav\u2010\n       ior selected") == "the behavior selected"
    assert readable("or SIM\u2010\n       PLE_BACKUP_SUFFIX.") == "or SIMPLE_BACKUP_SUFFIX."
    # a compound the document writes with its hyphen keeps it; the break goes
    assert join_hyphens("a well\u2010\n   known fact", seen={"well-known"}) == "a well\u2010known fact"
    # a change of case is a compound's hyphen, not a break: it stays
    assert readable("Self\u2010\n  Employed") == "Self\u2010Employed"


def test_a_plain_hyphen_at_a_line_end_keeps_the_compound_and_loses_the_break():
    assert readable("a command-\n  line option") == "a command-line option"
    # joined where the document writes the word whole elsewhere
    assert readable("the bud-\nget", seen={"budget"}) == "the budget"
    # an option or a range at a line end is no broken word: the line break is only whitespace
    assert readable("use\n--help or 1-\n5") == "use --help or 1- 5"


def test_every_row_value_is_readable():
    r = row("d", "summary", "Values are\n   read  by people.", 0.5, 3, 30)
    assert r["value"] == "Values are read by people." and (r["start_char"], r["end_char"]) == (3, 30)


def test_a_keyphrase_across_a_line_end_hyphen_is_one_word_and_its_span_is_as_found():
    text = (
        "The backup suffix is '~', unless set with --suffix or SIM\u2010\n"
        "       PLE_BACKUP_SUFFIX.  The version control method may be selected via the\n"
        "       --backup option or through the VERSION_CONTROL environment variable.\n"
    )
    found = candidates(text)
    assert "simple_backup_suffix" in found and "sim" not in found and "ple_backup_suffix" not in found
    c = found["simple_backup_suffix"]
    assert text[c.start : c.end] == "SIM\u2010\n       PLE_BACKUP_SUFFIX" and c.value == "SIMPLE_BACKUP_SUFFIX"


def test_keyphrase_values_on_real_man_pages_are_readable_and_their_spans_verbatim():
    broken = 0
    for page, text in machine_files.man_pages(8):
        broken += len(re.findall(r"\w\u2010\n", text))
        for phrase, c in candidates(text).items():
            assert not LAYOUT.search(c.value), (page, c.value)
            assert c.value == readable(text[c.start : c.end]), (page, phrase)
    if not broken:
        pytest.skip("none of the pages rendered here hyphenates a word at a line end")


@pytest.mark.parametrize("kind", ["licences", "markdown_files"])
def test_keyphrase_values_on_real_licences_and_markdown_are_readable(kind):
    for path, text in getattr(machine_files, kind)(6):
        for c in candidates(text).values():
            assert not LAYOUT.search(c.value), (path, c.value)
