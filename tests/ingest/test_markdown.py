"""Markdown is a format of its own (issue 36): YAML front matter into `metadata`, headings as
sections (as HTML headings are), HTML comment blocks out of the text (counted, as a PDF's
layout lines are), code blocks kept in the text but marked as code, never summary sentences.
Everything else is the file's own text."""

import re

from docbeam.pipeline.core.records import Document, Provenance
from docbeam.pipeline.extractors.summary import summary_spans
from docbeam.pipeline.ingest.parse import format_of
from tests import machine_files

README = """---
title: Otter survey tools
date: 2026-03-14
tags: [otters, survey]
---
<!--
  Copyright 2026 The Otter Project. Licensed under the Apache License, Version 2.0.
-->
# Otter survey tools

The tools count otters along a river from the photographs volunteers upload.
Each count is checked by a second volunteer before it is published.

Installation
------------

Install the package with pip, then run the counter on a folder of photographs.

```python
import otters
otters.count("photos/")  # Counts every otter in every photograph of the folder.
```

    otters --folder photos --report summary.csv

## Usage of the **counter**

Run the counter once a week, when the new photographs are in.
"""


def one(parse, name: str, data: str) -> Document:
    (doc,) = parse(name, data.encode())
    assert isinstance(doc, Document), doc
    return doc


def test_md_files_are_read_as_markdown():
    assert format_of("a/README.md") == format_of("notes.markdown") == "markdown"


def test_front_matter_goes_to_metadata_and_comments_leave_the_text(parse):
    doc = one(parse, "/docs/README.md", README)
    assert doc.metadata == {"title": "Otter survey tools", "date": "2026-03-14", "tags": ["otters", "survey"]}
    assert doc.text.startswith("# Otter survey tools\n\nThe tools count otters")
    assert "Copyright" not in doc.text and "title:" not in doc.text and "<!--" not in doc.text
    assert doc.provenance.format == "markdown" and doc.provenance.markup_lines == 8
    # the rest is the file's text as written
    assert doc.text == README[README.index("# Otter survey tools") :]


def test_headings_are_sections_at_their_lines(parse):
    doc = one(parse, "/docs/README.md", README)
    sections = doc.provenance.sections
    assert [title for _, title in sections] == ["Otter survey tools", "Installation", "Usage of the counter"]
    for at, title in sections:
        assert at == 0 or doc.text[at - 1] == "\n"
        line = doc.text[at:].split("\n", 1)[0]
        assert title.split()[0] in line


def test_code_blocks_stay_in_the_text_but_are_never_summary_sentences(parse):
    doc = one(parse, "/docs/README.md", README)
    assert 'otters.count("photos/")' in doc.text and "otters --folder photos" in doc.text
    code = [doc.text[a:b] for a, b in doc.provenance.code]
    assert any("otters.count" in c for c in code) and any("--folder photos" in c for c in code)
    sentences = [doc.text[s:e] for s, e in summary_spans(doc, "en")]
    assert "Each count is checked by a second volunteer before it is published." in sentences
    assert not [s for s in sentences if "Counts every otter" in s or "otters.count" in s]


def test_a_file_without_front_matter_keeps_every_line(parse):
    text = "---\n\nA thematic break opens this file.\n\n---\n\nThen text.\n"
    doc = one(parse, "/docs/rule.md", text)
    assert doc.text == text
    assert doc.metadata == {} and doc.provenance.markup_lines == 0
    bad_yaml = "---\nkey: [unclosed\n---\nBody text here.\n"
    doc = one(parse, "/docs/bad.md", bad_yaml)
    assert doc.text == bad_yaml and doc.metadata == {}


def test_a_file_of_front_matter_alone_is_rejected_as_empty(parse):
    (rej,) = parse("/docs/empty.md", b"---\ntitle: nothing else\n---\n")
    assert rej.error == "empty_text" and rej.source == "/docs/empty.md"


def test_summary_spans_leave_out_marked_code():
    text = "Prose comes first and says what it says.\n\n    Output: The counter ran and found nine otters.\n"
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text, provenance=Provenance(format="markdown"))
    assert len(summary_spans(doc, "en")) == 2
    marked = Provenance(format="markdown", code=((text.index("    Output"), len(text)),))
    doc = Document(uid="u", doc_id="d", source="s", row=0, text=text, provenance=marked)
    assert [text[s:e] for s, e in summary_spans(doc, "en")] == ["Prose comes first and says what it says."]


def test_real_markdown_files_get_sections_and_their_front_matter_as_metadata(parse):
    heading = re.compile(r"^(#{1,6})[ \t]+\S|^.+\n(?:=+|-+)[ \t]*$", re.MULTILINE)
    files = machine_files.markdown_files(8)
    fronted = machine_files.markdown_files(4, min_bytes=300, wanted=lambda t: t.startswith("---\n"))
    for path, text in files + fronted:
        (doc,) = parse("/docs/file.md", text.encode())
        if not isinstance(doc, Document):
            assert doc.error == "empty_text", (path, doc)
            continue
        if heading.search(text) and "```" not in text[: heading.search(text).start()]:
            assert doc.provenance.sections, path
        for at, title in doc.provenance.sections:
            assert at == 0 or doc.text[at - 1] in "\r\n", (path, title)
        if text.startswith("---\n") and doc.metadata:
            assert not doc.text.startswith("---"), path
        assert "<!--" not in doc.text.split("\n", 1)[0], path
    assert [doc for path, text in fronted if (doc := parse("/d.md", text.encode())[0]) and doc.metadata], fronted


LINKED = """# zstd

[![Build Status](https://api.travis-ci.com/facebook/zstd.svg?branch=dev)](https://travis-ci.com/facebook/zstd)

Zstandard is a fast lossless compression algorithm aimed at real-time compression scenarios.
For more information, check the [PyYAML homepage](https://github.com/yaml/pyyaml).
The library is documented in [`lib/README.md`](lib/README.md#modular-build) for builders.
Releases are announced on the mailing list <https://lists.example.org/zstd-announce>.
Benchmarks compare it against other fast compressors on a single core.

[docs]: https://facebook.github.io/zstd/zstd_manual.html
"""


def test_link_targets_images_and_reference_definitions_are_markup_not_text_to_extract(parse):
    from docbeam.pipeline.extractors.keyphrases import candidates

    doc = one(parse, "/docs/README.md", LINKED)
    assert doc.text.count("](") == 4  # the text keeps its lines as written
    marked = [doc.text[a:b] for a, b in doc.provenance.markup]
    assert "](https://github.com/yaml/pyyaml)" in marked and "<https://lists.example.org/zstd-announce>" in marked
    assert any(m.startswith("![Build Status](") for m in marked) and any(m.startswith("[docs]: ") for m in marked)
    sentences = [doc.text[s:e] for s, e in summary_spans(doc, "en")]
    assert "Zstandard is a fast lossless compression algorithm aimed at real-time compression scenarios." in sentences
    assert not [s for s in sentences if "](" in s or "<https" in s]
    words = {w for p in candidates(doc.text, (1, 1), "en", doc.provenance.markup) for w in p.split()}
    assert {"zstandard", "pyyaml", "homepage", "benchmarks"} <= words  # link text is text
    assert not words & {"travis", "api.travis", "github.com", "lists.example.org", "modular-build", "zstd_manual.html"}
    unmarked = {w for p in candidates(doc.text, (1, 1), "en") for w in p.split()}
    assert [w for w in unmarked if "travis" in w]  # what the markup ranges keep out
