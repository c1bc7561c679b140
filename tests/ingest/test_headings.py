"""Headings back into the main text, and permalink glyphs out of it (pipeline/ingest/headings.py)."""

from docbeam.pipeline.ingest.headings import is_permalink, place_headings


def test_permalinks_by_class_or_by_a_lone_glyph():
    assert is_permalink("headerlink", "#running-user-code", "¶")  # Sphinx
    assert is_permalink("anchor", "#usage", "")  # GitHub: an svg icon, no text
    assert is_permalink(None, "#usage", " 🔗 ") and is_permalink(None, "#x", "#")
    assert not is_permalink("reference internal", "#menus", "Menus")  # a table of contents entry
    assert not is_permalink(None, "https://example.org/#x", "¶")  # another page


def test_a_dropped_heading_goes_in_on_its_own_line_before_what_follows_it():
    text = "Copyright 2001 Joey Hess\nThe Debian base-passwd package contains the master files.\nMore."
    heads = [("Chapter 1. Introduction", "The Debian base-passwd package contains the master", False)]
    out, sections = place_headings(text, heads)
    assert out.splitlines() == [
        "Copyright 2001 Joey Hess",
        "Chapter 1. Introduction",
        "The Debian base-passwd package contains the master files.",
        "More.",
    ]
    assert sections == [(out.index("Chapter 1."), "Chapter 1. Introduction")]


def test_kept_and_dropped_headings_keep_page_order():
    # "Chapter 2" was dropped, "2.1 Users" kept: the chapter goes before the kept heading,
    # found through its lead, which runs through the kept heading's text
    text = "Intro text that is long enough.\n2.1 Users\nRoot is (typically) the superuser of the system."
    heads = [
        ("Chapter 2", "2.1 Users Root is (typically) the superuser", False),
        ("2.1 Users", "Root is (typically) the superuser", True),
    ]
    out, sections = place_headings(text, heads)
    assert out.splitlines()[1:3] == ["Chapter 2", "2.1 Users"]
    assert [out[at : at + len(h)] for at, h in sections] == ["Chapter 2", "2.1 Users"]


def test_a_heading_whose_text_is_not_in_the_main_content_stays_out():
    text = "The article body, with nothing of the sidebar in it."
    out, sections = place_headings(text, [("Related stories", "Ten recipes for a summer evening", False)])
    assert (out, sections) == (text, [])


def test_a_lead_that_runs_on_from_other_text_breaks_the_line():
    text = "Header words Body of the section that follows the heading."
    out, sections = place_headings(text, [("Section", "Body of the section that follows", False)])
    assert out == "Header words\nSection\nBody of the section that follows the heading."
    assert sections == [(13, "Section")]
