"""What the parsers need to know about a job's input."""

from dataclasses import dataclass


@dataclass(frozen=True)
class ParseConfig:
    id_field: str = "id"
    text_field: str = "text"
    max_doc_bytes: int = 64 << 20
    max_decompressed_bytes: int = 4 << 30
