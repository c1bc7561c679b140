"""Text from blocks (pages, paragraphs, tables, headings), with the offsets provenance needs.
Pure: no Beam here."""


def join_blocks(blocks: list[str]) -> tuple[str, list[int]]:
    """The blocks' text (each stripped) joined by blank lines, and the offset where each block
    starts. An empty block holds no character: its offset is where the text had got to."""
    parts: list[str] = []
    starts, at = [], 0
    for block in blocks:
        block = block.strip()
        if block and parts:
            parts.append("\n\n")
            at += 2
        starts.append(at)
        if block:
            parts.append(block)
            at += len(block)
    return "".join(parts), starts


def locate(text: str, headings: list[str], start: int = 0) -> list[tuple[int, str]]:
    """(offset, heading) for each heading found in `text`, each searched for after the previous one."""
    found = []
    for heading in headings:
        at = text.find(heading, start)
        if at >= 0:
            found.append((at, heading))
            start = at + len(heading)
    return found
