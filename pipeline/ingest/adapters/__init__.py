"""One small module per third-party parsing library: the only files that call it, so an
upgrade that changes its API breaks one file (pinned by tests/ingest/test_adapters.py).
pdf_text, docx_text, html_main and html_visible run inside the sandbox (sandbox.py), named to
it as functions (`sandbox.call(pdf_text.extract, ...)`), so the worker imports them too: they
import their libraries inside their functions, which only the sandbox's child calls.
warc_records runs in the worker (pure Python, streaming, its lines bounded)."""
