"""Word (.docx): one document per file; paragraphs and tables in document order through
python-docx (in the sandbox), blocks joined by blank lines; headings become section titles."""

from collections.abc import Iterator
from typing import BinaryIO

from docbeam.pipeline.core.records import Provenance, reject
from docbeam.pipeline.ingest.adapters import docx_text
from docbeam.pipeline.ingest.fields import STAGE, Record, document
from docbeam.pipeline.ingest.layout import join_blocks
from docbeam.pipeline.ingest.parse_config import ParseConfig
from docbeam.pipeline.ingest.reading import read_capped
from docbeam.pipeline.ingest.sandbox import ParseProblem, Sandbox


def parse(path: str, f: BinaryIO, cfg: ParseConfig, sandbox: Sandbox) -> Iterator[Record]:
    data = read_capped(path, f, cfg.max_doc_bytes)
    if not isinstance(data, bytes):
        yield data
        return
    try:
        blocks = sandbox.call(docx_text.extract, data, cfg.max_decompressed_bytes)
    except ParseProblem as p:
        yield reject(STAGE, p.code, path, p.message, row=0, doc_id=path)
        return
    text, starts = join_blocks([block for block, _ in blocks])
    sections = tuple((at, block) for at, (block, heading) in zip(starts, blocks) if heading)
    if len(text) > cfg.max_doc_bytes:
        yield reject(
            STAGE, "document_too_large", path, f"text longer than {cfg.max_doc_bytes} characters", row=0, doc_id=path
        )
        return
    yield document(path, 0, path, text, Provenance(format="docx", sections=sections))
