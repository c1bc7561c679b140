"""A web page -> its title and main content (no navigation, headers, footers, cookie
banners), through trafilatura."""

import logging

import trafilatura
from trafilatura.settings import Document
from trafilatura.utils import load_html

logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # it logs every page it finds no text in


def extract(markup: str) -> tuple[str, str, list[str]]:
    """(title, main text, headings of the main text in order); empty strings when there are none."""
    tree = load_html(markup)
    if tree is None:
        return "", "", []
    title = " ".join((tree.findtext(".//title") or "").split())
    # fast: without trafilatura's fallback extractors (readability, jusText): ~1.5x the pages per
    # CPU second at the same F1 on the article-extraction benchmark (tests/benchmarks/parsers.py)
    doc = trafilatura.bare_extraction(
        tree, fast=True, include_comments=False, include_tables=True, with_metadata=False, as_dict=False
    )
    if not isinstance(doc, Document) or not doc.text:
        return title, "", []
    heads = [" ".join("".join(h.itertext()).split()) for h in doc.body.iter("head")]
    return title, doc.text, [h for h in heads if h]
