"""What the parsers need to know about a job's input."""

from dataclasses import dataclass

from docbeam.pipeline.core.choices import HTML_TEXT
from docbeam.pipeline.core.flags import job_default


@dataclass(frozen=True)
class ParseConfig:
    # Defaults: the flags' (core.flags), so a ParseConfig() parses as a run without those flags does.
    id_field: str = job_default("id_field")
    text_field: str = job_default("text_field")
    max_doc_bytes: int = job_default("max_doc_bytes")
    max_decompressed_bytes: int = job_default("max_decompressed_bytes")
    html_text: str = job_default("html_text")
    max_pdf_pages: int = job_default("max_pdf_pages")
    parse_timeout_s: float = job_default("parse_timeout")  # per file (per record in a WARC) in the sandbox
    parse_memory_mb: int = job_default("parse_memory_mb")  # the sandbox's data segment
    follow_links: bool = job_default("follow_links")  # read a file whose link leaves its input's root
    language: str = job_default("language")  # a code for every document, or auto: each one's detected

    def __post_init__(self):
        if self.html_text not in HTML_TEXT:
            raise ValueError(f"html_text {self.html_text!r}: choose from {', '.join(HTML_TEXT)}")
