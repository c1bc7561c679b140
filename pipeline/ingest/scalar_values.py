"""Text that is not valid Unicode, checked at the one place records enter (parse.parse_file).

JSON allows a lone surrogate ("\\ud800") and crawls hold such text; no UTF-8 writer (Parquet,
JSON Lines, Beam's string keys) can write one, so a single such character used to end the
run. The rule is the one bytes that are not UTF-8 already follow in every format (csv, text,
parquet: `invalid_utf8`): the record is rejected, `invalid_unicode` in errors/ naming the field
and the character, and the rest of its file carries on. What goes to errors/ is escaped
(\\ud800 spelled out), so the rejection itself can be written.
"""

import dataclasses
import re

from docbeam.pipeline.core.records import Document, Rejection, Skipped, reject
from docbeam.pipeline.core.stages import Stage

_SURROGATE = re.compile("[\ud800-\udfff]")  # in a str every one is lone: a pair decodes to one code point


def valid(text: str) -> bool:
    if text.isascii():  # the common case: a C loop over bytes
        return True
    return _SURROGATE.search(text) is None


def escaped(text: str) -> str:
    """A readable, writable stand-in for invalid text: \\ud800 spelled out."""
    return text if valid(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


def _first_invalid(value: object, where: str) -> tuple[str, str, int] | None:
    """(field, character, offset) of the first lone surrogate in a value; containers walked
    (JSON and Parquet metadata nest)."""
    if isinstance(value, str):
        found = None if valid(value) else _SURROGATE.search(value)
        return (where, found.group(), found.start()) if found else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list | tuple) else ()
    for key, item in items:
        hit = _first_invalid(key, f"{where} key") if isinstance(key, str) else None
        if hit := hit or _first_invalid(item, f"{where}.{key}"):
            return hit
    return None


def checked(rec: Document | Rejection | Skipped) -> Document | Rejection | Skipped:
    """The record, or its rejection when its id, text or metadata is not valid Unicode."""
    if isinstance(rec, Skipped):
        return rec
    if isinstance(rec, Rejection):
        if all(valid(s) for s in (rec.doc_id or "", rec.message, rec.source)):
            return rec
        doc_id = escaped(rec.doc_id) if rec.doc_id else None
        return dataclasses.replace(rec, doc_id=doc_id, message=escaped(rec.message), source=escaped(rec.source))
    hit = _first_invalid(rec.doc_id, "the id") or _first_invalid(rec.text, "the text")
    hit = hit or _first_invalid(rec.metadata, "metadata")
    if hit is None:
        return rec
    where, char, offset = hit
    problem = f"{where} holds {escaped(char)} at character {offset}, not a Unicode scalar value (a lone surrogate)"
    return reject(Stage.PARSE, "invalid_unicode", rec.source, problem, row=rec.row, doc_id=escaped(rec.doc_id))
