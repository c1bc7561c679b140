"""Hits as a person reads them, and as --json prints them."""

import json
import re

NO_TEXT = "(no text: the run was written with --no-store-text; characters {start}-{end} of the document)"


def snippet(text: str | None, hit: dict, width: int = 240) -> str:
    """The chunk's text on one line, cut at a word boundary near `width` characters."""
    if text is None:
        return NO_TEXT.format(start=hit.get("start_char"), end=hit.get("end_char"))
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= width:
        return flat
    cut = flat.rfind(" ", 0, width)
    return flat[: cut if cut > width // 2 else width].rstrip() + " …"


def where(hit: dict) -> str:
    """`doc_id`, then its page(s) and section when the run recorded them."""
    parts = [str(hit["doc_id"])]
    if hit.get("page_start") is not None:
        a, b = hit["page_start"], hit.get("page_end")
        parts.append(f"p. {a}" if b in (None, a) else f"pp. {a}-{b}")
    if hit.get("section"):
        parts.append(f"§ {hit['section']}")
    return ", ".join(parts)


def render_text(hits: list[dict], header: str, empty: str = "the run has no chunks") -> str:
    lines = [header]
    if not hits:
        lines.append(f"  ({empty})")
    for h in hits:
        lines.append(f"{h['rank']:>3}. {h['score']:.3f}  {where(h)}  (chunk {h['chunk_index']})")
        lines.append(f"     {snippet(h.get('text'), h)}")
    return "\n".join(lines)


def render_json(run: str, query: str, model: str, method: str, hits: list[dict]) -> str:
    return json.dumps({"run": run, "query": query, "model": model, "method": method, "hits": hits}, ensure_ascii=False)
