"""What --input means: globs and folders, and the ids of documents that bring none."""

import pytest

from docbeam.pipeline.core.flags import UsageError
from docbeam.pipeline.ingest.sources import glob_root, name_of, relabel
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
