"""The progress display: what it says from real counter updates (the stage meters a job's
DoFns use, fed into live_counters), and the lines a real run logs."""

import logging
import re

import pytest

from docbeam.pipeline.core.stages import Stage
from docbeam.pipeline.cost import live_counters
from docbeam.pipeline.cost.metering import StageMeter
from docbeam.pipeline.launch.display.progress_display import Progress
from docbeam.pipeline.launch.running import job
from tests.helpers import run_job

CHARS = 600_000  # one long document, as in the report: one file of ~600 KB


@pytest.fixture(autouse=True)
def fresh_counters():
    live_counters.reset()
    yield
    live_counters.reset()


def _read_one_file(size: int = CHARS) -> None:
    StageMeter(Stage.PARSE).add(elements_in=1, bytes_in=size, elements_out=1, bytes_out=size)
    StageMeter(Stage.PARSE).live(live_files_read=1)  # ParseFile: once the file's documents are counted


def _chunk(chars: int, tokens: int, candidate_tokens: int = 0, start: bool = False) -> None:
    """What ChunkDocuments records for a group of windows of the long document."""
    meter = StageMeter(Stage.CHUNK)
    if start:
        meter.add(elements_in=1, bytes_in=CHARS)
        meter.live(live_chars_started=CHARS, live_candidate_tokens=candidate_tokens)
    meter.live(live_chars_chunked=chars, live_chunk_tokens=tokens, live_document_tokens=int(tokens * 0.9))


def _encode(tokens: int) -> None:
    StageMeter(Stage.ENCODE).add(elements_in=32, elements_out=32, tokens=tokens)


def test_one_long_document_shows_progress_inside_it_and_an_eta():
    p = Progress(files=1, size=CHARS)
    first = p.update(live_counters.snapshot(), 0.5)
    assert first["documents"] == "0 of ? documents written" and "≥" not in str(first) and first["eta"] == "?"
    _read_one_file()
    _chunk(60_000, 15_000, start=True)  # a tenth of the text chunked: 150,000 encoder tokens in all
    assert p.update(live_counters.snapshot(), 5)["documents"] == "0 of 1 documents written"
    seen = []
    for t in range(10, 60, 10):
        _encode(15_000)
        _chunk(60_000, 15_000)
        seen.append(p.update(live_counters.snapshot(), t))
    d = seen[-1]
    assert d["fraction"] == pytest.approx(0.5) and d["documents"] == "0 of 1 documents written"
    assert "50% of the work done" in d["tokens"] and "of ~135,000 document tokens" in d["tokens"]
    # 15,000 encoder tokens per 10 s since the first batch; 75,000 to go: 50 s.
    assert d["eta_seconds"] == pytest.approx(50)
    assert [s["fraction"] for s in seen] == sorted(s["fraction"] for s in seen) and seen[0]["fraction"] > 0


def test_the_first_sample_with_encoded_tokens_already_has_an_eta():
    """A short job's encoding may end before a second sample: its ETA comes from the
    encoder's own pace (tokens over the encoder's busy seconds) until then."""
    p = Progress(files=1, size=CHARS)
    _read_one_file()
    _chunk(60_000, 15_000, start=True)  # 150,000 encoder tokens in all
    StageMeter(Stage.ENCODE).add(tokens=15_000, wall_us=3e6)  # 5,000 tokens/s while busy
    d = p.update(live_counters.snapshot(), 10)
    assert d["eta_seconds"] == pytest.approx(135_000 / 5_000) and d["eta"] == "0:00:27"
    _encode(15_000)  # then the rate since the first batch: 15,000 tokens in 10 s
    assert p.update(live_counters.snapshot(), 20)["eta_seconds"] == pytest.approx(120_000 / 1_500)


def test_the_eta_covers_extraction_candidates():
    """A document's candidates are known as its chunking starts: they are encoder work the
    ETA counts, before any of them reaches the encoder."""
    plain, extracting = Progress(files=1, size=CHARS), Progress(files=1, size=CHARS)
    _read_one_file()
    _chunk(60_000, 15_000, start=True)
    _encode(10)
    plain.update(live_counters.snapshot(), 10)
    _encode(14_990)
    without = plain.update(live_counters.snapshot(), 20)
    live_counters.reset()
    _read_one_file()
    _chunk(60_000, 15_000, candidate_tokens=150_000, start=True)  # keyphrase candidates: as much again
    _encode(10)
    extracting.update(live_counters.snapshot(), 10)
    _encode(14_990)
    with_candidates = extracting.update(live_counters.snapshot(), 20)
    assert with_candidates["fraction"] == pytest.approx(without["fraction"] / 2)
    assert with_candidates["eta_seconds"] > 2 * without["eta_seconds"]


def test_counts_never_go_backwards_while_the_estimates_move():
    p = Progress(files=1, size=CHARS)
    _read_one_file()
    _chunk(60_000, 15_000, start=True)
    _encode(15_000)
    before = p.update(live_counters.snapshot(), 10)
    # The next windows are denser (code, tables): the estimate of the whole grows.
    _chunk(60_000, 60_000)
    after = p.update(live_counters.snapshot(), 20)
    assert after["fraction"] >= before["fraction"] and after["document_tokens_done"] >= before["document_tokens_done"]


def test_totals_before_every_file_is_read_are_estimates():
    p = Progress(files=12, size=1_200)
    StageMeter(Stage.PARSE).add(elements_in=4, bytes_in=300, elements_out=30, bytes_out=300)
    StageMeter(Stage.PARSE).live(live_files_read=3)  # the fourth started, not yet read
    d = p.update(live_counters.snapshot(), 1)
    assert d["documents"] == "0 of ~120 documents written" and d["files"] == "3/12 files"


def test_the_end_is_all_written_and_done():
    p = Progress(files=1, size=CHARS)
    _read_one_file()
    _chunk(CHARS, 150_000, start=True)
    _encode(150_000)
    assert p.update(live_counters.snapshot(), 60)["fraction"] < 1  # encoded, not yet written
    StageMeter(Stage.ASSEMBLE).add(elements_in=1, elements_out=1, tokens=135_000)
    d = p.update(live_counters.snapshot(), 61)
    assert d["documents"] == "1 of 1 documents written" and d["fraction"] == 1 and d["eta"] == "0:00:00"
    assert "100% of the work done (135,000 document tokens)" in d["tokens"]


@pytest.mark.slow
def test_a_real_run_logs_sane_first_and_last_lines(tmp_path, caplog, monkeypatch):
    """A folder of three files, one of them long: the log counts files, progress moves inside
    the long document before it is written, and nothing goes backwards."""
    folder = tmp_path / "docs"
    folder.mkdir()
    sentence = "The pipeline reads every document, cuts it into windows and encodes them in batches. "
    # ~15,000 tokens: batches of 4 rows for a few seconds, several progress lines (every 0.5 s)
    # before the document is written, on a loaded machine too
    (folder / "long.txt").write_text(sentence * 900)
    (folder / "a.txt").write_text("A short note about progress bars.")
    (folder / "b.md").write_text("# Title\n\nAnother short text.")
    monkeypatch.setattr(job, "PROGRESS_SECONDS", 0.5)
    caplog.set_level(logging.INFO, logger="docbeam")
    run_job(folder, tmp_path / "out", "--batch-rows", "4")
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("progress: ")]
    assert any(re.search(r"wave 1/1 \(\w+\): 3 file\(s\)", r.getMessage()) for r in caplog.records)
    # Nothing written yet; the total is unknown, an estimate while a file is still being read
    # (the Markdown file's first parse starts its sandbox), or the 3 documents.
    assert "≥" not in lines[0] and re.match(r"progress: 0 of (\?|~[1-3]|3) documents", lines[0]), lines[0]
    assert (
        lines[-1].startswith("progress: 3 of 3 documents written, 100% of the work done") and "ETA 0:00:00" in lines[-1]
    )
    written = [int(re.search(r"progress: (\d+) of", line)[1]) for line in lines]
    done = [int(re.search(r"(\d+)% of the work", line)[1]) for line in lines]
    assert written == sorted(written) and done == sorted(done)
    # Inside the long document: part of the work done while no document is written yet.
    assert any(0 < d < 100 and w == 0 for w, d in zip(written, done)), lines
    assert any(re.search(r"ETA \d:\d\d:\d\d", line) for line, w in zip(lines, written) if w == 0), lines


def test_a_file_counts_as_read_only_once_its_documents_are_counted():
    """The display took the document total as final once every file had *started*: '0 of 2
    documents' with 3 files, the third's document still on its way."""
    from docbeam.pipeline.cost.metering import metered

    class Parse:
        meter = StageMeter(Stage.PARSE)

        @metered(done="live_files_read")
        def work(self, path):
            yield from range(70)  # past drive's batch of 64 counts

    seen = []
    for i, _ in enumerate(Parse().work("f")):
        if i in (0, 69):
            snap = live_counters.snapshot()
            seen.append((snap["files"], snap["documents_read"]))
    snap = live_counters.snapshot()
    assert seen == [(0, 0), (0, 64)] and (snap["files"], snap["documents_read"]) == (1, 70)
