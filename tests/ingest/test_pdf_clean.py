"""PDF page text cleaning (pipeline/ingest/pdf_clean.py) on the lines PDFium gives: words
hyphenated at line ends, running headers and footers, dot leaders. The lines are those of the
real manuals that showed the problems (libtasn1's and shared-mime-info's, as PDFium reads them)."""

from docbeam.pipeline.ingest.pdf_clean import clean_pages, is_leader, join_hyphens


def test_pdfium_soft_hyphen_marks_make_words_whole():
    # PDFium joins the two lines and leaves U+FFFE where the line-end hyphen was
    text = "and Distinguished Encoding Rules (DER) manip\ufffeulation.\nan ASN.1 iden\ufffetifier."
    assert join_hyphens(text) == "and Distinguished Encoding Rules (DER) manipulation.\nan ASN.1 identifier."
    assert join_hyphens("the struc\u00adture\nand con\u00ad\nsiderable") == "the structure\nand considerable"


def test_a_compounds_own_hyphen_stays():
    # a capital or digit after the mark, or a compound the document writes elsewhere: a real '-'
    assert join_hyphens("a Self\ufffeEmployed worker, ISO\ufffe8859") == "a Self-Employed worker, ISO-8859"
    assert join_hyphens("well\ufffeknown", seen={"well-known"}) == "well-known"
    # where the document writes the joined word, it is one word, whatever its case
    assert join_hyphens("a SE\ufffeQUENCE OF", seen={"sequence"}) == "a SEQUENCE OF"
    assert join_hyphens("page\ufffe") == "page-"  # the word goes on on the next page: nothing joined


def test_a_hard_hyphen_at_a_line_end_joins_only_between_lowercase_letters():
    assert join_hyphens("the harbour bud-\nget was") == "the harbour budget was"
    assert join_hyphens("a well-\nknown fact", seen={"well-known"}) == "a well-\nknown fact"
    for kept in ("use the option -\n--help", "pages 1-\n5", "North-\nEast", "x = a -\nb"):
        assert join_hyphens(kept) == kept


def test_dot_leaders_are_layout_and_dots_in_text_are_not():
    for line in [
        "1 Introduction . . . . . . . . . . . . . . . . . . . 1",
        "Function and Data Index. . . . . . . . . . . . . 33",
        "Preface.........................iv",
        ". . . . .",
        "Contents …… 3",
    ]:
        assert is_leader(line), line
    for line in ["der len: bytes of ANS (der[0]..der[der len-1]).", "Wait... 3", "00 05 64 |..diff..>0=..***|", ""]:
        assert not is_leader(line), line


BODY = [
    "Each application that wishes to contribute to the MIME database will install a single XML file.",
    "The directory is added to the information found in previous directories.",
    "Applications may also define their own elements, provided they are namespaced.",
    "The rest of the file is made up of a sequence of small sections.",
]


def mime_pages(n: int) -> list[str]:
    """shared-mime-info's layout: its title above every page, the page number below."""
    return [f"Shared MIME-info Database\n{BODY[i]}\n{i + 1}" for i in range(n)]


def test_running_headers_and_page_numbers_are_dropped_on_four_pages_or_more():
    clean = clean_pages(mime_pages(4))
    assert clean.pages == BODY
    assert (clean.running, clean.leaders) == (8, 0)
    # three pages: every line stays (a short PDF's repeats are as likely content)
    assert clean_pages(mime_pages(3)).pages == mime_pages(3)


def test_page_numbers_inside_chapter_headers_counting_with_the_pages():
    # libtasn1's manual: a bare number on a chapter's first page, "Chapter n: title p" after it,
    # numbered from the fourth page (front matter unnumbered)
    heads = ["Libtasn1", "This manual is for", "Table of Contents", "1", "2"]
    heads += ["Chapter 2: ASN.1 structure handling 3", "Chapter 2: ASN.1 structure handling 4", "5"]
    heads += ["Chapter 3: Utilities 6", "Chapter 3: Utilities 7"]
    words = "cover licence contents introduction types naming parsing tools coding decoding".split()
    bodies = [f"This page is about {word}.\nIt says what the {word} part needs." for word in words]
    pages = [f"{head}\n{body}" for head, body in zip(heads, bodies)]
    clean = clean_pages(pages)
    assert clean.pages == pages[:3] + bodies[3 : len(heads)]


def test_chapter_titles_numbered_like_pages_stay():
    # one chapter a page, "Chapter n" on page n: a title, not a page number
    topics = ["ships", "rails", "bread", "ice"]
    pages = [f"Chapter {i + 1}: {topic}\nText about {topic}." for i, topic in enumerate(topics)]
    assert clean_pages(pages).pages == pages
    # a bookmark title is never dropped, even where it repeats like a header
    pages = [f"Chapter {i + 1}\n{body}" for i, body in enumerate(BODY)]
    assert clean_pages(pages, keep=[(i, f"Chapter {i + 1}") for i in range(4)]).pages == pages


def test_long_runs_cost_one_pass():
    # a text layer of one endless 'word' (a data blob): linear, not one try per character
    import time

    blob = "a" * 20_000 + ". Self\ufffeEmployed\n" + "." * 10_000 + "z"  # quadratic: 40 s
    t0 = time.perf_counter()
    assert join_hyphens(blob) == blob.replace("\ufffe", "-") and not is_leader(blob.split("\n")[1])
    assert time.perf_counter() - t0 < 1
