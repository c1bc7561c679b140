"""Documents from records with fields (JSONL objects, Parquet rows): which field is the id,
which the text, and the rest kept as metadata. Pure: no Beam here."""

from docbeam.pipeline.core.records import Document, Provenance, Rejection, reject
from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.ingest.parse_config import ParseConfig

STAGE = Stage.PARSE  # where every parser rejects
Record = Document | Rejection


def document(
    path: str, row: int, doc_id: str | None, text: str, provenance: Provenance, metadata: dict | None = None
) -> Record:
    if not text.strip():
        return reject(STAGE, "empty_text", path, "text is empty or only whitespace", row=row, doc_id=doc_id)
    uid = f"{path}#{row}"
    return Document(
        uid=uid, doc_id=doc_id or uid, source=path, row=row, text=text, metadata=metadata or {}, provenance=provenance
    )


def field_hint(obj: dict, cfg: ParseConfig) -> str:
    """'; the record has fields: a, b (use --text-field b?)': the likely fix for a missing text
    field, suggesting the field with the longest string value."""
    strings = {k: v for k, v in obj.items() if isinstance(v, str) and k != cfg.id_field}
    best = max(sorted(strings), key=lambda k: len(strings[k]), default=None)
    return f"; the record has fields: {', '.join(sorted(map(str, obj))) or 'none'}" + (
        f" (use --text-field {best}?)" if best else ""
    )


def from_fields(path: str, row: int, obj: dict, cfg: ParseConfig, fmt: str) -> Record:
    doc_id = obj.get(cfg.id_field)
    if doc_id is not None:
        if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
            kind = type(doc_id).__name__
            return reject(
                STAGE, "bad_id", path, f"field {cfg.id_field!r} must be a string or integer, got {kind}", row=row
            )
        doc_id = str(doc_id)
    if cfg.text_field not in obj or obj[cfg.text_field] is None:
        return reject(
            STAGE, "missing_text", path, f"no {cfg.text_field!r} field{field_hint(obj, cfg)}", row=row, doc_id=doc_id
        )
    text = obj[cfg.text_field]
    if not isinstance(text, str):
        kind = type(text).__name__
        return reject(
            STAGE, "text_not_string", path, f"field {cfg.text_field!r} is {kind}, not a string", row=row, doc_id=doc_id
        )
    if len(text) > cfg.max_doc_bytes:
        return reject(
            STAGE,
            "document_too_large",
            path,
            f"text longer than {cfg.max_doc_bytes} characters (--max-doc-bytes raises the limit)",
            row=row,
            doc_id=doc_id,
        )
    meta = {k: v for k, v in obj.items() if k not in (cfg.id_field, cfg.text_field)}
    return document(path, row, doc_id, text, Provenance(format=fmt), meta)
