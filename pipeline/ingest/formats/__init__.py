"""One module per input format: `parse(path, f, cfg, sandbox) -> Iterator[Document | Rejection | Skipped]`.

`f` is the open file (seekable where the storage allows); `sandbox` runs native parsers in a
child process (formats that need none ignore it)."""
