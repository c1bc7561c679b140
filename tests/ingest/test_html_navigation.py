"""`--html-text main` keeps a page's content, not its navigation (issue 36): what HTML marks as
navigation (`<nav>`, `role="navigation"`: a Sphinx sidebar's "Table of Contents") and blocks
of reading-order links (`rel="next"`: texinfo's `Next: ..., Previous: ..., Up: ...`) leave it."""

import re

from docbeam.pipeline.ingest.adapters import html_main
from tests import machine_files
from tests.ingest.files import DATA

PROSE = " ".join(
    f"Paragraph {i} explains how the library passes structures by value and what the caller must fill in."
    for i in range(12)
)
TEXINFO = f"""<html><head><title>Structures</title></head><body>
<div class="header"><p>
Next: <a href="Size.html" accesskey="n" rel="next">Size and Alignment</a>, Previous: <a href="Primitive.html"
accesskey="p" rel="prev">Primitive Types</a>, Up: <a href="Types.html" accesskey="u" rel="up">Types</a>
&nbsp; [<a href="Index.html" title="Index" rel="index">Index</a>]</p></div><hr>
<h4>2.3.2 Structures</h4><p>{PROSE}</p>
<p>See <a href="Size.html" rel="next">the next section</a> for how sizes are computed, which matters
for every structure that holds another one and for the arrays that such structures carry.</p>
</body></html>"""
SPHINX = f"""<html><head><title>Guide</title></head><body>
<div class="document"><div class="body" role="main"><section><h1>Guide</h1><p>{PROSE}</p></section></div></div>
<div class="sphinxsidebar" role="navigation" aria-label="main navigation"><h3><a href="#">Table of Contents</a></h3>
<ul><li><a href="#a">Installing the library on a new machine</a></li><li><a href="#b">Passing structures</a></li>
<li><a href="#c">Closures and their trampolines</a></li></ul></div>
<nav><a href="index.html">Home</a> | <a href="genindex.html">General index</a></nav>
</body></html>"""


def test_texinfo_next_previous_lines_leave_the_main_text():
    title, text, _ = html_main.extract(TEXINFO)
    assert "Next:" not in text and "Previous:" not in text and "Primitive Types" not in text
    assert "Paragraph 11 explains" in text
    # a link of the same kind inside a paragraph of prose is the prose's: it stays
    assert "the next section for how sizes are computed" in " ".join(text.split())


def test_a_sphinx_sidebar_and_nav_leave_the_main_text():
    _, text, _ = html_main.extract(SPHINX)
    assert "Table of Contents" not in text and "Closures and their trampolines" not in text
    assert "General index" not in text and "Paragraph 0 explains" in text


def test_navigation_that_is_the_page_stays():
    # a page that is nothing but a list of links is its own content: never dropped as navigation
    from lxml import html

    links = "".join(f"<li><a href='p{i}.html' rel='next'>Chapter {i} of the manual</a></li>" for i in range(30))
    tree = html.fromstring(f"<html><body><nav><ul>{links}</ul></nav><p>A short note.</p></body></html>")
    html_main.drop_navigation(tree)
    assert "Chapter 29 of the manual" in tree.text_content()
    tree = html.fromstring(f"<html><body><nav><ul>{links[:200]}</ul></nav><p>{PROSE}</p></body></html>")
    html_main.drop_navigation(tree)
    assert "Chapter" not in tree.text_content() and "Paragraph 11" in tree.text_content()


def test_the_real_sphinx_page_loses_its_table_of_contents_sidebar():
    # CPython's IDLE help as Sphinx builds it (tests/ingest/data/README.md)
    _, text, sections = html_main.extract((DATA / "idle-help-excerpt.html").read_text())
    assert "Table of Contents" not in text and "Table of Contents" not in [h for _, h in sections]
    assert "Startup and Code Execution" in text


NAV_LINE = re.compile(r"^\s*(?:Next|Previous|Prev|Up)\s*:", re.MULTILINE)


def test_real_manuals_with_navigation_markup_keep_none_of_it():
    marked = re.compile(r"""rel=["']?(?:next|prev)|role=["']navigation""")
    for path, markup in machine_files.html_manuals(8, wanted=marked.search):
        _, text, sections = html_main.extract(markup)
        assert not NAV_LINE.search(text), (path, NAV_LINE.search(text))
        assert "Table of Contents" not in [h for _, h in sections], path
        assert text.strip(), path
