"""Hostile files, each from a small generator: every one ends in error lines within the
time and memory bounds, and the good records beside it still come out."""

import gzip
import io
import resource
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from docbeam.pipeline.core.records import Document, Rejection
from docbeam.pipeline.ingest.parse import ParseConfig, parse_file
from docbeam.pipeline.ingest.sandbox import Sandbox
from docbeam.pipeline.io import outputs
from tests.helpers import child_env, rss_growth, table
from tests.ingest import files

DATE = "2024-05-01T12:00:00Z"


def warc_record(uri: str, html: bytes, length_delta: int = 0) -> bytes:
    """One WARC response record with an HTML page; `length_delta` bends its Content-Length."""
    block = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n" + html
    head = (
        f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nWARC-Date: {DATE}\r\n"
        f"WARC-Record-ID: <urn:uuid:{abs(hash(uri)):032x}>\r\n"
        f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(block) + length_delta}\r\n\r\n"
    )
    return head.encode() + block + b"\r\n\r\n"


def page(word: str) -> bytes:
    return files.news_page(paragraphs=2).replace("otter", word).encode()


def docs(records) -> list[Document]:
    return [r for r in records if isinstance(r, Document)]


def errors(records) -> list[Rejection]:
    return [r for r in records if isinstance(r, Rejection)]


# Item 1: the visible-text fallback ran in the worker, where no deadline reaches it.
def test_html_fallback_is_stopped_at_the_parse_timeout():
    hostile = b"<html><body>" + b"<p>many words in a paragraph</p>" * (1 << 19)  # 16 MiB: seconds to read
    with Sandbox(timeout_s=0.5) as box:

        def parse(path, data, cfg=None):
            return list(parse_file(path, lambda: io.BytesIO(data), cfg or ParseConfig(), sandbox=box))

        start = time.monotonic()
        (rec,) = parse("big.html", hostile, ParseConfig(html_text="all"))  # the fallback alone
        assert time.monotonic() - start < 20
        assert isinstance(rec, Rejection) and rec.error == "parse_timeout", rec
        box.timeout_s = 60  # the next files are not the deadline's to stop
        (good,) = parse("good.html", page("otter"))
        assert isinstance(good, Document) and "otter" in good.text
        # An unclosed `<!--` of 256 KiB took 132 s (quadratic), now none: a comment to the end
        (rec,) = parse("comment.html", b"<html><body>" + b"<!--" * (64 << 10))
        assert isinstance(rec, Rejection) and rec.error == "empty_text", rec


# Item 2: warcio's readline is quadratic on a long line.
def test_warc_header_line_of_32_mib_is_one_error_line_in_seconds(parse):
    good = warc_record("https://a.example/", page("badger"))
    huge = b"WARC/1.0\r\nWARC-Type: response\r\nX-Pad: " + b"a" * (32 << 20)
    data = gzip.compress(good + huge, 1)
    assert len(data) < (1 << 20)
    start = time.monotonic()
    out = parse("huge.warc.gz", data)
    assert time.monotonic() - start < 10  # 35 s before
    assert [d.doc_id for d in docs(out)] == ["https://a.example/"]
    (err,) = errors(out)
    assert err.error == "warc_corrupt" and "header line longer than" in err.message and err.row == 1


# Item 6: a Content-Length that covers the next record, or runs past the end.
def test_warc_content_length_covering_the_next_record_is_an_error_line_counting_it(parse):
    swallowed = warc_record("https://b.example/", page("weasel"))
    first = warc_record("https://a.example/", page("badger"), length_delta=len(swallowed))
    # the first record's block runs to the end of the second's, whose trailer it takes
    data = first[:-4] + b"\r\n\r\n" + swallowed + warc_record("https://c.example/", page("stoat"))
    out = parse("absorb.warc", data)
    assert [d.doc_id for d in docs(out)] == ["https://c.example/"]
    (err,) = errors(out)
    assert err.error == "warc_corrupt" and err.row == 0 and "covers the next 1 record(s)" in err.message


def test_warc_content_length_past_the_end_names_the_records_it_ran_over(parse):
    data = (
        warc_record("https://a.example/", page("badger"))
        + warc_record("https://b.example/", page("weasel"), length_delta=10_000)
        + warc_record("https://c.example/", page("stoat"))
    )
    out = parse("overrun.warc", data)
    assert [d.doc_id for d in docs(out)] == ["https://a.example/"]
    (err,) = errors(out)
    assert err.error == "warc_corrupt" and err.row == 1
    assert "runs past the end of the file, over 1 more record(s), not read" in err.message


# Item 5: after a rejected quoted field, the reader restarted inside it.
def test_csv_field_too_long_across_lines_never_turns_its_lines_into_documents(parse):
    inside = "".join(f"INJECTED-{i},looks like a row\n" for i in range(200))
    data = f'id,text\ngood-1,first row\nbad,"{inside}"\ngood-2,after the field\n'.encode()
    out = parse("inject.csv", data, max_doc_bytes=1000)
    assert not any("INJECTED" in d.text or "INJECTED" in d.doc_id for d in docs(out))
    assert [d.doc_id for d in docs(out)] == ["good-1"]
    (err,) = errors(out)
    assert err.error == "csv_bad_row" and err.row == 1 and "the rest of the file is not read" in err.message


def test_csv_one_unquoted_line_too_long_is_skipped_and_reading_goes_on(parse):
    data = b"id,text\ngood-1,first\nlong," + b"x" * 5000 + b"\ngood-2,second\n"
    out = parse("long.csv", data, max_doc_bytes=1000)
    assert [d.doc_id for d in docs(out)] == ["good-1", "good-2"]
    (err,) = errors(out)
    assert err.error == "document_too_large" and err.row == 1 and "line 3" in err.message


def dictionary_bomb_parquet(value_bytes: int, rows: int = 30) -> bytes:
    """A few KiB: one huge string, dictionary-encoded and compressed, the value of every row
    (the type stored as plain string, as most writers do)."""
    values = pa.DictionaryArray.from_arrays(pa.array([0] * rows, pa.int32()), pa.array(["a" * value_bytes]))
    table = pa.table({"id": [f"r{i}" for i in range(rows)], "text": values})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", compression_level=19, store_schema=False)
    return buf.getvalue()


# Item 3: 2,834 bytes of Parquet took a worker to 6 GB.
def test_parquet_dictionary_bomb_rejects_its_rows_without_expanding_them(parse):
    data = dictionary_bomb_parquet((8 << 20) + 1, rows=30)  # 30 rows of 8 MiB: 240 MiB expanded
    assert len(data) < 8192
    with rss_growth() as grew:
        out = parse("bomb.parquet", data, max_doc_bytes=8 << 20)
    assert [r.error for r in out] == ["document_too_large"] * 30
    assert [r.row for r in out] == list(range(30))
    assert grew[0] < 120 << 20, f"grew {grew[0] >> 20} MiB"  # one copy of the value, not 30


# Item 4: a corrupt page in the second row group lost the good rows of the first.
def test_parquet_corrupt_second_row_group_keeps_the_first_and_names_the_lost_rows(parse):
    table = pa.table({"id": [f"r{i}" for i in range(2000)], "text": [f"row {i} text" for i in range(2000)]})
    buf = io.BytesIO()
    pq.write_table(table, buf, row_group_size=1000, compression="snappy", use_dictionary=False)
    data = bytearray(buf.getvalue())
    column = pq.ParquetFile(io.BytesIO(bytes(data))).metadata.row_group(1).column(1)
    start = column.data_page_offset
    data[start + 40 : start + 240] = b"\xff" * 200  # the text page of the second row group
    out = parse("damaged.parquet", bytes(data))
    assert [d.doc_id for d in docs(out)] == [f"r{i}" for i in range(1000)]
    (err,) = errors(out)
    assert err.error == "invalid_parquet" and err.row == 1000 and "rows 1000-1999 (row group 1)" in err.message


def gzip_line(size: int, prefix: bytes, suffix: bytes) -> bytes:
    """A gzip stream of `prefix`, one line of `size` bytes, `suffix`: written in blocks, so the
    generator never holds the line."""
    z = zlib.compressobj(1, zlib.DEFLATED, 31)
    block = b"x" * (1 << 20)
    parts = [z.compress(prefix)]
    parts += [z.compress(block) for _ in range(size >> 20)]
    parts += [z.compress(suffix), z.flush()]
    return b"".join(parts)


LIMIT = 3 << 30  # the docbeam process's data segment: a regression fails the run, not the machine


@pytest.mark.slow
def test_hostile_corpus_through_docbeam_under_a_memory_limit(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    hostile = {
        "comment.html": b"<html><body>" + b"<!--" * (64 << 10),
        "header.warc.gz": gzip_line(32 << 20, b"WARC/1.0\r\nWARC-Type: response\r\nX-Pad: ", b"\r\n"),
        "absorb.warc": warc_record("https://a.example/", page("badger"), length_delta=4096)
        + warc_record("https://b.example/", page("weasel")),
        "inject.csv": b'id,text\nbad,"' + b"INJECTED-1,row\n" * (600 << 10) + b'"\n',  # 9 MB field
        "line.csv.gz": gzip_line(1 << 30, b"id,text\nlong,", b"\ngood-csv,after the long line\n"),
        "bomb.parquet": dictionary_bomb_parquet((8 << 20) + 1, rows=200),  # 1.6 GB expanded
    }
    for name, data in hostile.items():
        (src / name).write_bytes(data)
    (src / "good.html").write_bytes(page("otter"))
    (src / "good.jsonl").write_text('{"id": "j1", "text": "A good line of text about otters."}\n')
    command = [str(Path(sys.executable).with_name("docbeam")), "run", "--input", str(src / "*"), "--output", str(out)]
    command += ["--max-doc-bytes", str(8 << 20), "--parse-timeout", "5", "--max-rejected", "100%"]

    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (LIMIT, LIMIT))

    start = time.monotonic()
    proc = subprocess.run(command, env=child_env(), preexec_fn=limit, capture_output=True, text=True, timeout=900)
    took = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10
    print(f"hostile corpus: {took:.0f} s, peak RSS {peak >> 20} MiB")
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {}
    for e in outputs.read_errors(str(out)):
        found.setdefault(e["source"].rsplit("/", 1)[-1], set()).add(e["error"])
    assert found == {
        "comment.html": {"empty_text"},  # an unclosed comment runs to the end: no text
        "header.warc.gz": {"warc_corrupt"},
        "absorb.warc": {"warc_corrupt"},
        "inject.csv": {"csv_bad_row"},
        "line.csv.gz": {"document_too_large"},
        "bomb.parquet": {"document_too_large"},
    }
    ids = sorted(d["doc_id"].rsplit("/", 1)[-1] for d in table(out, "documents", ["doc_id"]).to_pylist())
    assert ids == ["good-csv", "good.html", "j1"]  # the good documents beside the hostile ones


def test_parquet_stops_at_the_files_decompressed_bound_not_each_row_groups(parse):
    """12 row groups of 1 MiB each pass a per-group bound of 4 MiB and are 12 MiB all the same:
    the bound is the file's, as a gzip stream's is; the rows after it are one error line."""
    buf = io.BytesIO()
    rows = [{"id": f"r{i}", "text": f"w{i} " * (1 << 18)} for i in range(12)]  # ~1 MiB of text each
    pq.write_table(pa.Table.from_pylist(rows), buf, row_group_size=1, compression="zstd")
    out = parse("groups.parquet", buf.getvalue(), max_decompressed_bytes=4 << 20)
    docs, lost = [r for r in out if isinstance(r, Document)], [r for r in out if isinstance(r, Rejection)]
    meta = pq.ParquetFile(io.BytesIO(buf.getvalue())).metadata
    sizes = [sum(meta.row_group(g).column(c).total_uncompressed_size for c in range(2)) for g in range(12)]
    assert max(sizes) < 4 << 20 < sum(sizes)  # each group passes; the file does not
    within = next(g for g in range(12) if sum(sizes[: g + 1]) > 4 << 20)
    assert [d.row for d in docs] == list(range(within)) and within >= 2
    assert [(r.error, r.row) for r in lost] == [("decompressed_too_large", len(docs))]
    assert f"rows {len(docs)}-11" in lost[0].message
