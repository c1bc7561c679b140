"""A summary sentence is a sentence of prose: never a heading glued to the sentence after it, a
table of contents line or a format specification (pipeline/extractors/summary.py, prose.py)."""

import io
from pathlib import Path

import pytest

from docbeam.model.checkpoint import default_checkpoint_dir
from docbeam.model.tokenizer import load_tokenizer
from docbeam.pipeline.core.records import Document, Provenance
from docbeam.pipeline.extractors.summary import Summary, reads_as_sentence, summary_spans
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox

# `man date | col -b` of GNU coreutils 9.1 (Debian 12), as a user ran it: the man page is the
# coreutils documentation (GPLv3+), stored as the command printed it
DATE_MAN = (Path(__file__).parent / "data" / "date.1.txt").read_text()

# The start of CPython's IDLE help (Lib/idlelib/help.html, PSF licence) as docbeam's main-content
# mode gives it: each heading on a line of its own, a section at its offset
IDLE = (
    "Startup and Code Execution\n"
    "Upon startup with the -s option, IDLE will execute the file referenced by\n"
    "the environment variables IDLESTARTUP or PYTHONSTARTUP.\n"
    "IDLE first checks for IDLESTARTUP; if IDLESTARTUP is present the file\n"
    "referenced is run.\n"
    "Running user code\n"
    "With rare exceptions, the result of executing Python code with IDLE is\n"
    "intended to be the same as executing the same code by the default method,\n"
    "directly with Python in a text-mode system console or terminal window.\n"
)
IDLE_SECTIONS = ((0, "Startup and Code Execution"), (IDLE.index("Running user code"), "Running user code"))

# Debian's base-passwd manual (/usr/share/doc/base-passwd/users-and-groups.html) with
# --html-text all: its table of contents, one entry a line, then the first chapter
MANUAL = (
    "Table of Contents\n"
    "1. Introduction\n"
    "2. Users and Groups\n"
    "Chapter 1. Introduction\n"
    "The Debian base-passwd package contains the master versions of /etc/passwd and /etc/group. "
    "The update-passwd tool keeps the entries in these master files in sync on all Debian systems.\n"
)


def spans(text: str, sections=(), language: str = "en") -> list[str]:
    prov = Provenance(format="html", sections=sections)
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text, provenance=prov)
    return [text[s:e] for s, e in summary_spans(doc, language)]


def test_a_heading_is_not_the_start_of_the_sentence_after_it():
    want = [
        "Upon startup with the -s option, IDLE will execute the file referenced by\n"
        "the environment variables IDLESTARTUP or PYTHONSTARTUP.",
        "IDLE first checks for IDLESTARTUP; if IDLESTARTUP is present the file\nreferenced is run.",
        "With rare exceptions, the result of executing Python code with IDLE is\n"
        "intended to be the same as executing the same code by the default method,\n"
        "directly with Python in a text-mode system console or terminal window.",
    ]
    assert spans(IDLE, IDLE_SECTIONS) == want
    # without the format's sections (plain text), by the heading's shape: a short line without
    # a full stop before a much longer one that starts with a capital
    assert spans(IDLE) == want


def test_table_of_contents_lines_are_not_sentences():
    got = spans(MANUAL)
    assert got == [
        "The Debian base-passwd package contains the master versions of /etc/passwd and /etc/group.",
        "The update-passwd tool keeps the entries in these master files in sync on all Debian systems.",
    ]


def test_the_date_man_page_format_lines_are_not_sentences():
    got = spans(DATE_MAN)
    assert not [s for s in got if "%" in s.split()[0] or "\n\n" in s], got
    # the three the summary picked, and every other line of the format table
    for line in ("%c     locale's date and time", "%D     date; same as %m/%d/%y", "%x     locale's date"):
        assert line in DATE_MAN and not [s for s in got if line.split()[0] in s]
    assert "By default, date pads numeric fields with zeroes." in got
    assert "Display\tdate  and  time\t in  the given FORMAT." in got
    # option descriptions are not sentences of their own
    assert "output date/time in ISO 8601 format." in DATE_MAN and not [s for s in got if s.startswith("output")]
    assert "Mandatory arguments to long options are\tmandatory  for\tshort  options\n       too." in got
    assert not [s for s in got if s.startswith(("NAME", "DESCRIPTION", "-d, --date"))]


def test_a_text_written_in_lower_case_keeps_its_sentences():
    text = "hey! landed safely, the flight was fine. hotel is lovely, right by the sea."
    assert spans(text) == ["landed safely, the flight was fine.", "hotel is lovely, right by the sea."]


def test_sentence_shape():
    assert reads_as_sentence("Root is (typically) the superuser.")
    assert reads_as_sentence('He said: "the plan was first reported in January."')
    assert reads_as_sentence("Convert seconds since the Epoch (1970-01-01 UTC) to a date")  # one long line
    assert not reads_as_sentence("2.1. Removal of the unversioned packages")
    assert not reads_as_sentence("%U     week number of year, with Sunday as first day of week (00..53)")
    assert not reads_as_sentence("+      pad with zeros, and put '+' before future years with >4 digits.")
    assert not reads_as_sentence("Menus\nFile menu (Shell and Editor)\nEdit menu (Shell and Editor)\nRun menu here")
    assert not reads_as_sentence("Sun, 29 Feb 2004 16:21:42 -0800 or 2004-02-29 16:21:42.")  # mostly digits


def test_the_documents_language_sets_the_sentence_rules():
    text = "Am 14. März 2024 fuhren wir mit dem Zug von Berlin nach München. Die Fahrt dauerte vier Stunden."
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text, language="de")
    # the document's German rules: "14." ends no sentence
    tokenizer, special = load_tokenizer(default_checkpoint_dir())
    got = [s.text for s in Summary().candidates(doc, tokenizer, special, 64)]
    assert got == [text[: text.index(" Die")], "Die Fahrt dauerte vier Stunden."]
    english = Document(uid="u", doc_id="d", source="s", row=0, text=text)  # undetermined: English rules
    assert [s.text for s in Summary().candidates(english, tokenizer, special, 64)][0].startswith("März")


def test_japanese_sentences_are_summary_candidates():
    """Unspaced scripts count words by characters: a Japanese sentence is not one "word"."""
    text = (
        "東京は日本の首都であり、世界でも有数の大都市です。"
        "毎年多くの観光客が訪れ、古い寺院と新しい建物が並んでいます。"
        "はい。"
    )
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text, language="ja")
    assert [doc.text[s:e] for s, e in summary_spans(doc, "ja")] == [
        "東京は日本の首都であり、世界でも有数の大都市です。",
        "毎年多くの観光客が訪れ、古い寺院と新しい建物が並んでいます。",
    ]  # "はい。" (yes.) is too short to summarise anything


# --- issue 36: navigation, synopsis and usage lines, code ------------------------------------
@pytest.fixture(scope="module")
def parse_file_text():
    """parse_file_text(name, text) -> the Document docbeam reads from a file so named (or None)."""
    with Sandbox(timeout_s=60) as box:

        def parse(name: str, text: str) -> Document | None:
            data = text.encode()
            recs = list(parse_file(name, lambda: io.BytesIO(data), ParseConfig(), sandbox=box))
            return recs[0] if recs and isinstance(recs[0], Document) else None

        yield parse


def test_navigation_lines_are_not_sentences():
    text = (
        "Next: Thread Safety, Previous: Memory Usage, Up: Using libffi   [Contents][Index]\n\n"
        "File: coreutils.info,  Node: cp invocation,  Next: dd invocation,  Up: Basic operations\n\n"
        "The library frees every closure it allocated when the program ends.\n"
    )
    assert spans(text) == ["The library frees every closure it allocated when the program ends."]


def test_synopsis_and_usage_lines_are_not_sentences():
    text = (
        "SYNOPSIS\n       cp [OPTION]... [-T] SOURCE DEST\n       cp [OPTION]... SOURCE... DIRECTORY\n\n"
        "DESCRIPTION\n       Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.\n\n"
        "Usage: asn1Coding [OPTION] DEFINITIONS ASSIGNMENTS\n"
        "Generates a DER encoding of ASN.1 DEFINITIONS file and ASSIGNMENTS file with value assignments.\n"
    )
    assert spans(text) == [
        "Copy SOURCE to DEST, or multiple SOURCE(s) to DIRECTORY.",
        "Generates a DER encoding of ASN.1 DEFINITIONS file and ASSIGNMENTS file with value assignments.",
    ]


def test_c_declarations_and_source_lines_are_not_sentences():
    text = (
        "Since: 2.0\nasn1 get octet der\n"
        "int asn1_get_octet_der (const unsigned char * der, int der_len, [Function]\n"
        "int * ret_len, unsigned char * str, int str_size, int * str_len)\n\n"
        "ffi_status ffi_prep_cif (ffi_cif *cif, ffi_abi abi, unsigned int nargs,\n"
        "ffi_type *rtype, ffi_type **atypes);\n\n"
        "The following addon.cc uses the cleanup hook:\n// addon.cc\n#include <node.h>\n"
        "static void cleanup(void* arg) {\n  free(arg);\n}\n\n"
        "This function decodes the octet string and returns its length.\n"
    )
    assert spans(text) == ["This function decodes the octet string and returns its length."]


def test_prose_that_cites_options_and_brackets_stays():
    text = (
        "Many programs and desktops use the MIME system[MIME] to represent the types of files.\n"
        "The backup suffix is '~', unless set with --suffix or SIMPLE_BACKUP_SUFFIX.\n"
        "Use the -x option (for example, -x 3) when the function foo() is slow.\n"
    )
    assert len(spans(text)) == 3


def test_summary_candidates_of_real_man_pages_manuals_and_markdown_are_prose(parse_file_text):
    from tests import machine_files
    from tests.benchmarks.extraction_defects import C_SIGNATURE, CODE, INLINE_CODE, NAVIGATION, SYNOPSIS

    docs = [(p, parse_file_text(p + ".txt", t)) for p, t in machine_files.man_pages(8)]
    docs += [(p, parse_file_text(p, t)) for p, t in machine_files.html_manuals(6)]
    docs += [(p, parse_file_text(p.removesuffix(".gz"), t)) for p, t in machine_files.markdown_files(8)]
    checked = 0
    for path, doc in docs:
        if doc is None:
            continue
        for s, e in summary_spans(doc, "en"):
            sentence = doc.text[s:e]
            checked += 1
            assert not NAVIGATION.search(sentence), (path, sentence)
            assert not SYNOPSIS.search(sentence), (path, sentence)
            assert not C_SIGNATURE.search(sentence) and not CODE.search(INLINE_CODE.sub("code", sentence)), (
                path,
                sentence,
            )
    assert checked
