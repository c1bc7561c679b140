"""Plain text's layout lines leave its text as a PDF's do (issue 36): a man page's header and
footer lines, and the running headers and footers of text paged with form feeds; counted."""

import re

from docbeam.pipeline.core.records import Document
from docbeam.pipeline.ingest.text_layout import clean_text
from tests import machine_files

BODY = "NAME\n       tool - do a thing\n\nDESCRIPTION\n       Does the thing, well.\n"


def test_a_man_pages_header_and_footer_lines_are_layout():
    page = f"TOOL(1)\t\t\t User Commands\t\t\t TOOL(1)\n\n{BODY}\nacme tools 2.4\t\tMarch 2024\t\t\t TOOL(1)\n"
    clean = clean_text(page)
    assert clean.text == BODY.rstrip("\n") and clean.running == 2


def test_any_language_and_section_name_is_a_header():
    page = f"CHSH(1)   Commandes de l'utilisateur   CHSH(1)\n\n{BODY}\nutil-linux 2.38   juillet 2022   CHSH(1)"
    assert clean_text(page).running == 2
    name = "openssl-asn1parse(1SSL)"
    page = f"{name}   OpenSSL   {name}\n\n{BODY}\n3.0.11   2023-09-19   {name}"
    assert clean_text(page).running == 2


def test_paged_man_output_loses_its_header_and_footer_on_every_page():
    header, footer = "TOOL(1)    User Commands    TOOL(1)", "acme 2.4    March 2024    TOOL(1)"
    page = "\n\n".join([header, BODY, footer, header, BODY, footer])
    clean = clean_text(page)
    assert clean.running == 4 and header not in clean.text and footer not in clean.text
    assert clean.text.count("Does the thing, well.") == 2


def test_text_that_is_no_man_page_is_left_as_it_is():
    no_frame = [
        BODY,
        "FOO(1) is a function.\nIt returns FOO(1)\nand more text here\n",  # no header: not at both ends
        f"TOOL(1)  User Commands  TOOL(1)\n\n{BODY}\nno footer here\n",  # a header without its footer
        "TOOL(1)  x  TOOL(1)\nTOOL(1)\n",  # nothing but the frame
    ]
    for text in no_frame:
        assert clean_text(text).text == text and clean_text(text).running == 0, text


def test_text_paged_with_form_feeds_loses_its_running_headers_and_page_numbers():
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    pages = [
        "RFC 9999            A Protocol            June 2026\n\n"
        + "".join(f"The {w} part of section {w} says what the {words[i]} rule is.\n" for w in words[i:] + words[:i])
        + f"\nSmith            Informational            [Page {i + 1}]\n"
        for i in range(5)
    ]
    clean = clean_text("\f".join(pages))
    assert clean.running == 10
    assert "[Page" not in clean.text and "A Protocol" not in clean.text
    assert clean.text.count("says what the") == 30


def test_real_man_pages_lose_their_header_and_footer_through_the_text_format(parse):
    framed = 0
    for page, text in machine_files.man_pages(8) + machine_files.man_pages(4, machine_files.TRANSLATED_MAN_PAGES):
        lines = text.strip().split("\n")
        (doc,) = parse("/docs/page.txt", text.encode())
        assert isinstance(doc, Document), (page, doc)
        # the frame as man(7) prints it: the page's name at both ends of the first line, and
        # at the end of the last (a name wider than the page garbles it: then there is none)
        name = re.fullmatch(r"\s*(\S+\(\w+\))\s.*\s\1\s*", lines[0])
        if not (name and lines[-1].rstrip().endswith(name.group(1))):
            assert doc.provenance.running_lines == 0, page
            continue
        framed += 1
        assert doc.provenance.running_lines == 2, page
        assert lines[0] not in doc.text and lines[-1].strip() not in doc.text, page
        assert doc.text == doc.text.strip("\n") and len(doc.text) > 0.8 * len(text.strip()), page
    assert framed, "no man page rendered here has its header and footer"


def test_licences_have_no_man_page_frame(parse):
    for path, text in machine_files.licences(6):
        (doc,) = parse("/docs/licence.txt", text.encode())
        assert doc.provenance.running_lines == 0 and doc.text == text, path
