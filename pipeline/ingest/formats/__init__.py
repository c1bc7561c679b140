"""One module per input format: `parse(path, f, cfg) -> Iterator[Document | Rejection]`."""
