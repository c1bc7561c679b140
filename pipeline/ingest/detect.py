"""What a file's first bytes say it is, whatever its name. Pure: no Beam here.

The extension says which format a file claims; its content has the last word where it has a
signature: a PDF named .txt is read as PDF, a PNG named .txt is rejected naming what it is,
never embedded as bytes. Content with no signature that is UTF-8 text is "text" (a format
without a signature of its own, JSON lines or CSV, may still read it).
"""

import codecs
import io
import re
import zipfile
import zlib
from typing import BinaryIO

from docbeam.pipeline.ingest.reading import looks_binary

HEAD_BYTES = 4096

# signature -> kind; the kinds docbeam reads are format names (see parse.FORMATS). Signatures
# that are printable text are long enough that no real text file starts with them by chance.
SIGNATURES = (
    (b"PK\x03\x04", "zip"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "ole"),
    (b"WARC/1.", "warc"),
    (b"PAR1", "parquet"),
    (b"\x1f\x8b", "gzip"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
    (b"II*\x00", "tiff"),
    (b"MM\x00*", "tiff"),
    (b"\x7fELF", "elf"),
    (b"{\\rtf", "rtf"),
    (b"%!PS", "postscript"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!\x1a\x07", "rar"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
BZIP2 = re.compile(rb"BZh[1-9]1AY&SY")  # "BZh" alone begins English words
DESCRIPTIONS = {
    "zip": "a ZIP archive (not a Word document)",
    "ole": "an OLE compound file (a legacy .doc/.xls/.ppt, or a password-protected Office file)",
    "gzip": "gzip-compressed data",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "tiff": "a TIFF image",
    "elf": "an executable (ELF)",
    "rtf": "an RTF document",
    "postscript": "a PostScript file",
    "7z": "a 7-Zip archive",
    "rar": "a RAR archive",
    "zstd": "zstd-compressed data",
    "bzip2": "bzip2-compressed data",
}
HTML_STARTS = (b"<!doctype html", b"<html")


def sniff(f: BinaryIO) -> str | None:
    """The kind of content `f` holds from its first bytes (a format name docbeam reads, or
    a key of DESCRIPTIONS): "text" for UTF-8 text without a signature (plain text, JSON, CSV...),
    None when nothing gives it away. Leaves `f` wherever it read to: rewind or reopen it."""
    head = f.read(HEAD_BYTES)
    if b"%PDF-" in head[:1024]:  # the PDF header may follow up to 1 KiB of junk
        return "pdf"
    kind = next((k for sig, k in SIGNATURES if head.startswith(sig)), "bzip2" if BZIP2.match(head) else None)
    if kind == "zip":
        return "docx" if _is_docx(f) else "zip"
    if kind == "gzip":
        return "warc" if _gunzip_head(head).startswith(b"WARC/1.") else "gzip"
    if kind is None and head.lstrip(b"\xef\xbb\xbf \t\r\n").lower().startswith(HTML_STARTS):
        return "html"
    return "text" if kind is None and _is_text(head) else kind


def describe(kind: str) -> str:
    return DESCRIPTIONS.get(kind, kind)


def _is_text(head: bytes) -> bool:
    try:  # a character cut at the end of a head shorter than the file is not an error
        text = codecs.getincrementaldecoder("utf-8")().decode(head, final=len(head) < HEAD_BYTES)
    except UnicodeDecodeError:
        return False
    return not looks_binary(text)


def _is_docx(f: BinaryIO) -> bool:
    try:
        f.seek(0)
        return "word/document.xml" in zipfile.ZipFile(f).namelist()
    except (zipfile.BadZipFile, OSError, io.UnsupportedOperation):
        return False


def _gunzip_head(head: bytes) -> bytes:
    try:
        return zlib.decompressobj(31).decompress(head, 64)
    except zlib.error:
        return b""
