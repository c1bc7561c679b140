"""Fixtures of the ingest tests: one sandbox process for the module, a parse helper."""

import io

import pytest

from docbeam.pipeline.core.records import Document, Rejection, Skipped
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox


@pytest.fixture(scope="module")
def sandbox():
    with Sandbox(timeout_s=60) as box:
        yield box


@pytest.fixture(scope="module")
def parse(sandbox):
    """parse(path, data, **ParseConfig fields) -> every record parse_file yields."""

    def run(path: str, data: bytes, **cfg) -> list[Document | Rejection | Skipped]:
        return list(parse_file(path, lambda: io.BytesIO(data), ParseConfig(**cfg), sandbox=sandbox))

    return run
