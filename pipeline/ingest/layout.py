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
