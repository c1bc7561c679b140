"""What the parsers need to know about a job's input."""

from dataclasses import dataclass

from docbeam.pipeline.core.choices import HTML_TEXT


@dataclass(frozen=True)
class ParseConfig:
    id_field: str = "id"
    text_field: str = "text"
    max_doc_bytes: int = 64 << 20
    max_decompressed_bytes: int = 4 << 30
    html_text: str = "main"
    max_pdf_pages: int = 5000
    parse_timeout_s: float = 120.0  # per file (per record in a WARC) in the sandbox
    parse_memory_mb: int = 2048  # the sandbox's data segment
    follow_links: bool = False  # read a file whose link leaves its input's root (sources.leaves_root)
    language: str = "auto"  # --language: a code for every document, or auto: each one's detected

    def __post_init__(self):
        if self.html_text not in HTML_TEXT:
            raise ValueError(f"html_text {self.html_text!r}: choose from {', '.join(HTML_TEXT)}")
