"""The sandbox bounds native parsers in time and memory: a file that hangs or crashes its
parser is one error line, and the next file parses in a fresh child process."""

import io
import json
import os
import socket
import threading
import uuid

import pytest

from docbeam.pipeline.core.records import Document, Rejection
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sandbox import ParseProblem, Sandbox
from tests.ingest import files


def parse_one(path: str, data: bytes, sandbox: Sandbox, **cfg):
    (rec,) = parse_file(path, lambda: io.BytesIO(data), ParseConfig(**cfg), sandbox=sandbox)
    return rec


def test_a_parser_that_runs_too_long_is_stopped_and_the_next_file_parses():
    with Sandbox(timeout_s=1.5) as box:
        rec = parse_one("/in/slow.pdf", files.slow_pdf(), box)
        assert isinstance(rec, Rejection) and rec.error == "parse_timeout" and rec.message.startswith("/in/slow.pdf")
        assert box._proc is None  # killed, not left running
        assert isinstance(parse_one("/in/book.pdf", files.multipage_pdf(), box), Document)
        assert box.starts == 2


def test_a_parser_that_dies_is_one_error_and_the_next_file_parses():
    # PDFium aborts the process when an allocation fails: the memory cap turns the bomb into a crash
    with Sandbox(timeout_s=60, memory_mb=256) as box:
        rec = parse_one("/in/bomb.pdf", files.memory_bomb_pdf(), box)
        assert isinstance(rec, Rejection) and rec.error == "parse_crashed" and "SIGABRT" in rec.message
        assert isinstance(parse_one("/in/book.pdf", files.multipage_pdf(), box), Document)


def test_child_lifecycle_library_errors_deaths_between_calls_and_close():
    box = Sandbox()
    assert box.call(json.loads, "[1, 2]") == [1, 2] and box.starts == 1
    assert box.call(json.loads, "3") == 3 and box.starts == 1  # one child serves call after call
    with pytest.raises(ParseProblem) as err:
        box.call(json.loads, "{not json")  # an exception no adapter expects: crashed, and a fresh child next
    assert err.value.code == "parse_crashed" and "JSONDecodeError" in err.value.message
    assert box.call(json.loads, "[1, 2]") == [1, 2] and box.starts == 2
    box._proc.kill()  # dies between two calls (the OOM killer, say): the next call starts another
    box._proc.wait()
    assert box.call(json.loads, "2") == 2 and box.starts == 3
    proc = box._proc
    box.close()
    assert proc.poll() is not None


def test_one_sandbox_per_thread_parses_pdfs_side_by_side():
    """PDFium must never run in two threads of one process: each thread's sandbox is its own process."""
    data = files.multipage_pdf()
    expected = parse_one("/in/book.pdf", data, None).text
    texts: list[str] = []

    def worker():
        with Sandbox() as box:
            texts.extend(parse_one("/in/book.pdf", data, box).text for _ in range(5))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert texts == [expected] * 10


def test_a_default_socket_timeout_does_not_reach_the_child():
    """Libraries set socket.setdefaulttimeout() (Beam's GCS client does): the sandbox's socket
    must still block in the child, or the child's first read fails."""
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(30)
    try:
        with Sandbox() as box:
            assert box.call(json.loads, "[1]") == [1] and box.starts == 1
    finally:
        socket.setdefaulttimeout(previous)


def test_the_child_gets_no_credentials_from_the_worker_environment(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "s3cret")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/keys/sa.json")
    with Sandbox(timeout_s=60) as box:
        assert box.call(os.getenv, "AWS_SECRET_ACCESS_KEY") is None
        assert box.call(os.getenv, "GOOGLE_APPLICATION_CREDENTIALS") is None
        assert box.call(os.getenv, "PATH")  # what it needs stays


def test_replies_are_plain_data_never_unpickled_objects():
    # The child has parsed hostile bytes: what it sends back is read as JSON, so an object
    # (which a pickle would rebuild in the worker) is a crash of that call, not a value.
    with Sandbox(timeout_s=60) as box:
        with pytest.raises(ParseProblem) as caught:
            box.call(uuid.uuid4)
        assert caught.value.code == "parse_crashed" and "not plain data" in caught.value.message
        assert box.call(json.loads, '["a", 1, [true, null]]') == ["a", 1, [True, None]]
        assert box.call(json.loads, '"\\ud800 lone"') == "\ud800 lone"  # text as PDFium may give it


@pytest.mark.parametrize(
    "reply", [b"5", b"null", b'{"ok": 1, "b": 2}', b'["problem", 5]', b'["raised", 5]', b'["ok"]', b"[1, 2]"]
)
def test_a_reply_of_any_other_shape_is_malformed_never_another_error(reply):
    """A child that parsed hostile bytes may be hostile: whatever it sends, the worker sees
    ValueError (which `call` turns into parse_crashed), nothing else."""
    from docbeam.pipeline.ingest.sandbox import _load

    with pytest.raises(ValueError):
        _load(reply)
