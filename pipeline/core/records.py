"""The records that flow through a docbeam job. Plain dataclasses: cheap to pickle.

Built with keywords only: several fields are integers of similar meaning (row, index,
start_char, end_char, n_tokens), and a swapped pair would fail silently.
"""

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, kw_only=True, slots=True)
class Provenance:
    """Where a document's text came from, beyond its file: what its format tells."""

    format: str  # detected format: jsonl, parquet, csv, text, markdown, html, pdf, docx, warc
    pages: tuple[int, ...] = ()  # character offset in the text where each page starts (page 1 first)
    sections: tuple[tuple[int, str], ...] = ()  # (character offset, heading), in document order
    url: str | None = None  # WARC: the record's target URI
    crawl_date: str | None = None  # WARC: WARC-Date, ISO 8601 UTC
    # Layout lines left out of the text (summed into the manifest's counts)
    running_lines: int = 0  # running headers, footers, page numbers (PDF; man pages, paged text)
    leader_lines: int = 0  # contents and index lines with dot leaders (PDF)
    markup_lines: int = 0  # Markdown: front matter and HTML comment lines
    # (start, end) character ranges that are code, not prose (Markdown's code blocks), in order
    code: tuple[tuple[int, int], ...] = ()
    # (start, end) ranges of inline markup a reader does not read as text (Markdown's link
    # destinations, images, link reference definitions, autolinks), in order: no summary
    # sentence or keyphrase comes from them
    markup: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Document:
    uid: str  # unique per input record: "source#row"; doc_id may repeat across records
    doc_id: str
    source: str
    row: int
    text: str
    metadata: dict = field(default_factory=dict)
    provenance: Provenance | None = None
    # ISO 639-1 code whose rules (sentences, stop words, dates, money) apply to this document:
    # --language when given, else the detected language; None: undetermined (English rules).
    language: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Rejection:
    """One rejected input record (or whole file), bound for errors/."""

    source: str
    doc_id: str | None
    stage: str
    error: str  # short machine-readable kind, e.g. "invalid_json"
    message: str  # what a person needs to fix it
    row: int | None = None

    def to_json(self) -> dict:
        return {
            "source": self.source,
            "doc_id": self.doc_id,
            "stage": self.stage,
            "error": self.error,
            "message": self.message,
            "row": self.row,
        }


def reject(
    stage: str, error: str, source: str, problem: str, *, row: int | None = None, doc_id: str | None = None
) -> Rejection:
    """A Rejection whose message names the file (and row) first: "<source> row <n>: <problem>"."""
    where = source if row is None else f"{source} row {row}"
    return Rejection(source=source, doc_id=doc_id, stage=stage, error=error, message=f"{where}: {problem}", row=row)


@dataclass(frozen=True, kw_only=True, slots=True)
class Skipped:
    """An input record that is not a document by design (a WARC request, an image response,
    a redirect): neither in documents/ nor in errors/, but counted under the parse stage."""

    source: str
    row: int
    reason: str  # short machine-readable kind, e.g. "not_html"


@dataclass(frozen=True, kw_only=True, slots=True)
class DocInfo:
    """What the assembly step needs to know about a document besides its vectors."""

    uid: str
    doc_id: str
    source: str
    row: int
    n_chars: int
    n_tokens: int
    n_chunks: int
    n_segments: int  # chunks + extraction segments: assembly expects exactly this many vectors
    metadata: dict = field(default_factory=dict)
    extractions: tuple = ()  # rows from text-only extractors (entities), written only if the doc is kept
    text: str | None = None  # the text offsets refer to; None with --no-store-text
    provenance: Provenance | None = None
    fingerprint: str | None = None  # hash of the text and everything that changes the outputs
    language: str | None = None  # Document.language


@dataclass(frozen=True, kw_only=True, slots=True)
class Segment:
    """One window of tokens to embed: a chunk of a document, or an extraction candidate."""

    uid: str
    doc_id: str
    kind: str  # "chunk" | extraction kinds ("phrase", "sentence", ...)
    index: int
    start_char: int
    end_char: int
    ids: np.ndarray  # int32, [CLS] ... [SEP]
    text: str | None = None  # kept for extraction candidates only
    cut_in_word: bool = False  # a chunk that had to start or end inside a word (no boundary in reach)
    pool_from: int = 0  # leading tokens left out of pooling (a prompt the checkpoint's Pooling excludes)

    @property
    def n_tokens(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, kw_only=True, slots=True)
class SegmentVector:
    uid: str
    doc_id: str
    kind: str
    index: int
    start_char: int
    end_char: int
    n_tokens: int
    vector: np.ndarray  # float32 [hidden], L2-normalised
    attention: str  # the kernel that computed it (recorded per document)
    text: str | None = None
    cut_in_word: bool = False
