"""What --input means: globs and folders, and the ids of documents that bring none."""

import json
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.core.records import Skipped
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sources import for_folder, for_glob, glob_root, name_of, relabel
from docbeam.pipeline.io import outputs
from docbeam.pipeline.launch.planning.planner import list_files
from tests.helpers import run_job, table, write_jsonl


@pytest.mark.parametrize(
    ("pattern", "root"),
    [
        ("/data/docs/*.jsonl", "/data/docs"),
        ("/data/docs/**/a-*.jsonl", "/data/docs"),
        ("/data/docs/a.jsonl", "/data/docs"),
        ("gs://b/in/2026-*/x.parquet", "gs://b/in"),
        ("gs://b/in/x[12].txt", "gs://b/in"),
    ],
)
def test_the_root_is_the_folder_before_the_first_wildcard(pattern, root):
    assert glob_root(pattern) == root


def test_names_and_ids_relative_to_the_root():
    assert name_of("/data/docs/sub/a.jsonl", "/data/docs") == "sub/a.jsonl"
    assert name_of("gs://b/in/2026-01/x.parquet", "gs://b/in") == "2026-01/x.parquet"
    assert relabel("/data/docs/sub/a.jsonl#3", "/data/docs/sub/a.jsonl", "sub/a.jsonl") == "sub/a.jsonl#3"
    assert relabel("/data/docs/notes.txt", "/data/docs/notes.txt", "notes.txt") == "notes.txt"
    assert relabel("my-own-id", "/data/docs/a.jsonl", "a.jsonl") == "my-own-id"


@pytest.mark.slow
def test_a_folder_means_its_readable_files_recursively(tmp_path):
    root = tmp_path / "corpus"
    (root / "2026" / "12").mkdir(parents=True)
    write_jsonl(root / "2026" / "12" / "a.jsonl", [{"text": "first document"}, {"id": "own", "text": "second"}])
    (root / "notes.txt").write_text("a text file at the top")
    (root / "image.png").write_bytes(b"\x89PNG not a document")
    res = run_job(root, tmp_path / "out")
    ids = {d["doc_id"] for d in table(tmp_path / "out", "documents").to_pylist()}
    assert ids == {"2026/12/a.jsonl#0", "own", "notes.txt"}
    assert res.manifest["accounting"]["holds"] and res.manifest["counts"]["rejected"] == 0
    assert res.stage_totals["match"]["skipped"] == 1  # the PNG: not a document, not an error


def test_a_folder_without_readable_files_is_a_one_line_error(tmp_path):
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "a.png").write_bytes(b"png")
    with pytest.raises(UsageError, match=r"a folder with no files docbeam reads \(found \.png\); it reads"):
        run_job(tmp_path / "pics", tmp_path / "out")


def test_inputs_whose_ids_would_collide_fail_before_the_job(tmp_path):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
        write_jsonl(tmp_path / sub / "x.jsonl", [{"text": f"from {sub}"}])
    with pytest.raises(UsageError, match=r"a/x.jsonl and .*b/x.jsonl would give the same document ids \(x.jsonl#"):
        run_job([tmp_path / "a" / "*.jsonl", tmp_path / "b" / "*.jsonl"], tmp_path / "out")
    with pytest.raises(UsageError, match="matched by two inputs"):
        run_job([tmp_path / "a" / "*.jsonl", tmp_path / "a" / "x.jsonl"], tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ---- content decides, not the name ---------------------------------------------------------


@pytest.mark.slow
def test_text_is_read_as_text_whatever_its_name_and_a_file_too_large_is_named(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "notes.docx").write_text("Plain words in a file that claims to be Word.")
    write_jsonl(src / "rows.pdf", [{"id": "r1", "text": "JSON lines named as a PDF"}])
    (src / "LICENSE").write_text("Permission is hereby granted, free of charge.")
    (src / "big.txt").write_text("word " * 400)  # 2,000 bytes, over --max-doc-bytes 1000
    out = tmp_path / "out"
    res = run_job(src / "*", out, "--max-doc-bytes", "1000", "--max-rejected", "1")
    docs = {d["doc_id"]: d["format"] for d in table(out, "documents", ["doc_id", "format"]).to_pylist()}
    # text without a format signature is read as text, and says so, never as its extension's format
    assert docs == {"notes.docx": "text", "rows.pdf": "text", "LICENSE": "text"}
    (err,) = outputs.read_errors(str(out))
    assert err["error"] == "document_too_large" and err["doc_id"] == "big.txt"
    assert "big.txt" in err["message"] and "--max-doc-bytes" in err["message"]
    assert res.manifest["accounting"]["holds"]


# ---- file names that are not UTF-8 ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("waves", [[], ["--wave-files", "1"]], ids=["one-job", "waves"])
def test_a_name_that_is_not_utf8_is_one_error_line_and_the_run_goes_on(tmp_path, waves):
    src = tmp_path / "in"
    src.mkdir()
    (src / "good.txt").write_text("A file with a well-formed name.")
    (src / "also.md").write_text("Another well-formed one.")
    with open(os.fsencode(src) + b"/caf\xe9.txt", "wb") as f:  # Latin-1 é: not UTF-8
        f.write(b"text behind a Latin-1 name")
    out = tmp_path / "out"
    res = run_job(src, out, "--max-rejected", "1", *waves)
    ids = {d["doc_id"] for d in table(out, "documents", ["doc_id"]).to_pylist()}
    assert ids == {"good.txt", "also.md"}
    raw = b"".join(p.read_bytes() for p in (out / "errors").glob("*.jsonl"))
    (err,) = [json.loads(line) for line in raw.decode("utf-8").splitlines()]  # strict UTF-8, valid JSON
    assert err["error"] == "non_utf8_name" and err["source"].endswith("/caf\\xe9.txt")
    assert "caf\\xe9.txt" in err["message"]
    assert res.manifest["accounting"]["holds"] and res.manifest["counts"]["rejected"] == 1


# ---- links ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_file_link_that_leaves_the_input_is_skipped_and_counted(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-OUTSIDE-THE-INPUT")
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "doc.txt").write_text("An ordinary document.")
    (src / "sub" / "shadow.md").symlink_to(secret)
    (src / "inside.txt").symlink_to(src / "doc.txt")  # a link that stays under the input: read
    out = tmp_path / "out"
    res = run_job(src, out)
    rows = table(out, "documents", ["doc_id", "text"]).to_pylist()
    assert {d["doc_id"] for d in rows} == {"doc.txt", "inside.txt"}
    assert not any("SECRET" in d["text"] for d in rows)
    assert not any("SECRET" in c["text"] for c in table(out, "chunks", ["text"]).to_pylist())
    assert res.manifest["counts"]["skipped_by_reason"] == {"link_outside_input": 1}
    assert res.manifest["accounting"]["holds"] and res.manifest["verdict"]["ok"]

    allowed = tmp_path / "allowed"
    run_job(src, allowed, "--follow-links")
    assert "sub/shadow.md" in {d["doc_id"] for d in table(allowed, "documents", ["doc_id"]).to_pylist()}


@contextmanager
def fifo_released_after(fifo: Path, seconds: float) -> Iterator[list]:
    """Once `seconds` have passed, opens `fifo` for writing whenever a reader waits on it, so a
    reader stuck there (the bug) reads an empty file and the test fails instead of hanging.
    Yields a list that is non-empty if that was needed."""
    done, released = threading.Event(), []

    def release():
        if done.wait(seconds):
            return
        while not done.wait(0.05):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # ENXIO while no reader waits
                released.append(fifo)
            except OSError:
                pass

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    try:
        yield released
    finally:
        done.set()
        thread.join()


def reasons(path: Path, name: str, **cfg) -> list[str]:
    """What parse_file makes of the listed `path`: Skipped reasons, or the other records' kinds."""
    records = parse_file(str(path), lambda: open(path, "rb"), ParseConfig(**cfg), name=name)
    return [r.reason if isinstance(r, Skipped) else type(r).__name__ for r in records]


def test_a_fifo_a_socket_or_a_device_is_skipped_unread(tmp_path, monkeypatch):
    """A FIFO in the input hung the run ("2/2 files; reading", killed at 90 s): opening one waits
    for a writer. None is opened; each is skipped as a special file."""
    src = tmp_path / "in"
    src.mkdir()
    os.mkfifo(src / "pipe.txt")
    (src / "zero.txt").symlink_to("/dev/zero")  # a device through a link: endless bytes
    monkeypatch.chdir(src)  # a socket's path must be short
    with socket.socket(socket.AF_UNIX) as sock, fifo_released_after(src / "pipe.txt", 5) as released:
        sock.bind("sock.txt")
        got = {name: reasons(src / name, name, max_doc_bytes=1 << 16) for name in ("pipe.txt", "sock.txt")}
        got["zero.txt"] = reasons(src / "zero.txt", "zero.txt", follow_links=True, max_doc_bytes=1 << 16)
    assert not released, "a reader waited on the FIFO"
    assert got == {"pipe.txt": ["special_file"], "sock.txt": ["special_file"], "zero.txt": ["special_file"]}
    assert reasons(src / "zero.txt", "zero.txt") == ["link_outside_input"]  # a link out says so first


def test_a_folder_link_that_leaves_the_input_is_listed_to_be_skipped_and_counted(tmp_path):
    """The listing walks folders without following links: a link to a folder outside the input
    vanished from the run, uncounted. It is listed (size 0) and skipped unread, never walked."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET-OUTSIDE-THE-INPUT")
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "doc.txt").write_text("An ordinary document.")
    (src / "sub" / "away").symlink_to(outside)
    (src / "away.txt").symlink_to(outside)
    (src / "near").symlink_to(src / "sub")  # stays inside: its files are listed where they lie

    def listed(item) -> dict[str, int]:
        return {name: size for size, name in list_files((item,)).values()}

    assert listed(for_folder(str(src))) == {"doc.txt": 21, "sub/away": 0, "away.txt": 0}
    assert listed(for_glob(str(src / "*.txt"))) == {"doc.txt": 21, "away.txt": 0}  # sub/away: not matched
    for name in ("sub/away", "away.txt"):
        assert reasons(src / name, name) == reasons(src / name, name, follow_links=True) == ["link_outside_input"]


@pytest.mark.slow
@pytest.mark.parametrize("waves", [(), ("--wave-files", "1")])  # matched by the job, or listed at launch
def test_special_files_and_folder_links_that_leave_the_input_are_skipped_and_counted(tmp_path, waves):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET-OUTSIDE-THE-INPUT")
    src = tmp_path / "in"
    src.mkdir()
    (src / "doc.txt").write_text("An ordinary document.")
    (src / "away").symlink_to(outside)
    os.mkfifo(src / "pipe.txt")
    out = tmp_path / "out"
    with fifo_released_after(src / "pipe.txt", 60) as released:
        res = run_job(src, out, *waves)
    assert not released, "the run waited on the FIFO"
    assert {d["doc_id"] for d in table(out, "documents", ["doc_id"]).to_pylist()} == {"doc.txt"}
    assert res.manifest["counts"]["skipped_by_reason"] == {"link_outside_input": 1, "special_file": 1}
    assert res.manifest["accounting"]["holds"] and res.manifest["verdict"]["ok"]


@pytest.mark.slow
@pytest.mark.parametrize("waves", [(), ("--wave-files", "1")])
def test_a_run_written_inside_a_folder_input_is_not_read_as_documents(tmp_path, waves):
    """A new user's second run of a folder whose first run's output sits inside it read that
    run's Parquet and report as documents (11 read instead of 4, 2 rejected, exit 3)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(2):
        (corpus / f"note{i}.txt").write_text(f"Note {i}: the harbour lantern was lit at dusk on day {i}.\n")
    first = run_job(corpus, corpus / "out", *waves)
    second = run_job(corpus, corpus / "out2", *waves)
    assert first.manifest["counts"]["read"] == second.manifest["counts"]["read"] == 2
    assert sorted(table(corpus / "out2", "documents")["doc_id"].to_pylist()) == ["note0.txt", "note1.txt"]


def test_a_run_written_into_the_input_folder_itself_is_not_corpus(tmp_path):
    """A new user ran `--input corpus/ --output corpus`: the next run over corpus/ read that
    run's Parquet, report and manifest as 27 more documents. The files beside it stay corpus."""
    from docbeam.pipeline.core import tables
    from docbeam.pipeline.ingest import sources

    sources._holds_a_run.cache_clear()
    for name in ("notes.txt", "documents/part-0.parquet", "_cost/report.md", "reports/q1.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    root = str(tmp_path)
    mine = [f"{root}/documents/part-0.parquet", f"{root}/_cost/report.md"]
    assert not any(sources.in_a_run(p, root) for p in mine)  # no run here yet: all of it is corpus
    (tmp_path / tables.RUN_MARKER).write_text('{"run_id": "r"}')
    sources._holds_a_run.cache_clear()
    assert all(sources.in_a_run(p, root) for p in [*mine, f"{root}/{tables.RUN_MARKER}"])
    assert not sources.in_a_run(f"{root}/notes.txt", root) and not sources.in_a_run(f"{root}/reports/q1.md", root)
