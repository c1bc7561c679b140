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


def test_a_hard_hyphen_at_a_line_end_joins_only_into_a_word_the_document_writes():
    assert join_hyphens("the harbour bud-\nget was", seen={"budget"}) == "the harbour budget was"
    assert join_hyphens("the harbour bud-\nget was") == "the harbour bud-get was"
    assert join_hyphens("a well-\nknown fact", seen={"well-known"}) == "a well-known fact"
    assert join_hyphens("North-\nEast") == "North-East"
    for kept in ("use the option -\n--help", "pages 1-\n5", "x = a -\nb"):
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


# ---- what a page keeps: the reviewer's cases (issue 24 follow-up) ---------------------------


def test_lines_repeating_in_shape_but_not_in_text_are_content():
    # five distinct sentences a page whose numbers differ: only exact repeats are headers
    pages = [
        f"We sold {3 + i} boats in May.\nThe yard built {20 + i} hulls.\nPrices held.\n"
        f"Crews worked {40 + i} hours.\nThe fleet has {70 + i} ships."
        for i in range(4)
    ]
    assert clean_pages(pages).pages == pages


def test_a_page_is_never_emptied_and_identical_pages_keep_their_text():
    same = ["Quarterly report\nRevenue grew by ten percent this quarter.\nCosts were flat."] * 4
    assert clean_pages(same).pages == same
    # a duplicated page is content even where a middle line would be left
    longer = ["Quarterly report\nRevenue grew.\nCosts were flat.\nStaff grew.\nThe end."] * 4
    assert clean_pages(longer).pages == longer
    # slides: a 'Step n' title counting with the pages, one line of text under it. The title
    # goes as a page number would (a known limit); the line under it, which the page needs, stays
    slides = [f"Step {n}\nPress the button number {n} to continue." for n in range(1, 6)]
    assert clean_pages(slides).pages == [slide.split("\n")[1] for slide in slides]


def test_page_number_shapes_still_go_and_a_number_inside_a_sentence_is_no_page_number():
    bodies = [f"{BODY[i % 4]}\nIt has {i + 7} parts." for i in range(6)]
    for footer in ("{n}", "Page {n} of 6", "- {n} -"):
        pages = [f"{body}\n{footer.format(n=i + 1)}" for i, body in enumerate(bodies)]
        assert clean_pages(pages).pages == bodies, footer
    romans = ["i", "ii", "iii", "iv", "v", "vi"]
    assert clean_pages([f"{b}\n{r}" for b, r in zip(bodies, romans)]).pages == bodies
    # the number in 'button number n' counts with the page but is not where a page number stands
    pages = [f"Manual\nPress the button number {n} to continue.\n{BODY[n % 4]}" for n in range(1, 6)]
    assert clean_pages(pages).pages == [page.split("\n", 1)[1] for page in pages]


def test_leader_detection_is_linear_on_long_digit_runs():
    # quadratic before: 0.66 s at 10k digits, 10.7 s at 40k. Count regex work instead of timing:
    # the runs below take well under a second when linear and minutes when quadratic.
    import time

    t0 = time.perf_counter()
    assert not is_leader("...." + "1" * 2_000 + "x")
    small = time.perf_counter() - t0
    t0 = time.perf_counter()
    assert not is_leader("...." + "1" * 200_000 + "x") and not is_leader("...." + "i" * 200_000 + "z")
    assert is_leader("Index ....." + "1" * 200_000)
    assert time.perf_counter() - t0 < max(2.0, 3 * 100 * small)  # 100x the input: linear is ~100x


def test_a_hard_hyphen_stays_unless_the_document_writes_the_word_whole():
    text = "Use the command-\nline tool, a built-\nin feature of the state-\nof-the-art system."
    whole = "Use the command-line tool, a built-in feature of the state-of-the-art system."
    assert clean_pages([text]).pages == [whole]
    # the joined word written elsewhere: one word; the right-hand part going on with '-': never joined
    assert clean_pages(["the harbour bud-\nget, a budget"]).pages == ["the harbour budget, a budget"]
    assert join_hyphens("state-\nof-art", seen={"stateof"}) == "state-of-art"
