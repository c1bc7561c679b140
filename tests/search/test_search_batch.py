"""`docbeam search RUN --queries FILE`, `--where`, `--per-document` on the bundled sample run
(real model, real Parquet): 100 queries answered in one process with the model loaded once,
JSON Lines in the order given, filters on language, doc_id prefix, section and metadata, and a
per-document top k that never lists a document twice."""

import json

import pytest

from docbeam.pipeline import cli
from docbeam.pipeline.search import filters, query
from docbeam.pipeline.search.run_chunks import open_run
from tests.helpers import table

pytestmark = pytest.mark.slow


def search(capsys, *argv: str) -> tuple[int, list[str], str]:
    status = cli.main(["search", *argv])
    captured = capsys.readouterr()
    return status, captured.out.splitlines(), captured.err


def test_a_hundred_queries_in_one_process_with_the_model_loaded_once(sample_run, tmp_path, capsys):
    out, _ = sample_run
    lines = []
    for i in range(100):
        text = f"question {i}: how do I boil spaghetti or read a file?"
        lines.append(json.dumps({"query": text, "id": i}) if i % 3 == 0 else json.dumps(text) if i % 3 == 1 else text)
    (tmp_path / "q.txt").write_text("\n".join(lines) + "\n\n")
    query.query_embedder.cache_clear()
    status, got, err = search(capsys, str(out), "--queries", str(tmp_path / "q.txt"), "--top-k", "3")
    assert status == 0, err
    assert query.query_embedder.cache_info().misses == 1  # one model for the 100 queries
    answers = [json.loads(line) for line in got]
    assert len(answers) == 100
    for i, a in enumerate(answers):
        assert a["query"].startswith(f"question {i}:") and a["id"] == (i if i % 3 == 0 else None)
        assert len(a["hits"]) == 3 and a["method"] == "exact" and a["ms"] > 0
        assert [h["rank"] for h in a["hits"]] == [1, 2, 3]


def test_a_bad_queries_line_is_one_line_naming_the_file_and_line(sample_run, tmp_path, capsys):
    out, _ = sample_run
    (tmp_path / "q.jsonl").write_text('{"query": "fine"}\n{"query": 3}\n')
    status, got, err = search(capsys, str(out), "--queries", str(tmp_path / "q.jsonl"))
    assert (status, got) == (2, []) and f"{tmp_path / 'q.jsonl'}:2: no query" in err and err.count("\n") == 1


def test_per_document_lists_each_document_once_with_its_best_chunk(sample_run, capsys):
    out, _ = sample_run
    q = "dictionary keys and hashing"
    status, plain, _ = search(capsys, str(out), q, "--top-k", "10", "--json")
    status2, per_doc, _ = search(capsys, str(out), q, "--top-k", "5", "--json", "--per-document")
    assert status == status2 == 0
    plain_hits, doc_hits = json.loads(plain[0])["hits"], json.loads(per_doc[0])["hits"]
    assert len({h["doc_id"] for h in plain_hits}) < len(plain_hits)  # the plain top 10 repeats a document
    assert len(doc_hits) == 5 and len({h["doc_id"] for h in doc_hits}) == 5
    # each is the document's best chunk, in the order of the plain ranking's first occurrences
    firsts = []
    for h in plain_hits:
        if h["doc_id"] not in [f["doc_id"] for f in firsts]:
            firsts.append(h)
    k = min(5, len(firsts))
    assert [(h["doc_id"], h["chunk_index"]) for h in doc_hits[:k]] == [
        (h["doc_id"], h["chunk_index"]) for h in firsts[:k]
    ]


@pytest.mark.parametrize(
    "where, holds",
    [
        (["collection=python-docs"], lambda d, c: (d["metadata"] or "").find('"python-docs"') >= 0),
        (["metadata.collection=python-docs"], lambda d, c: (d["metadata"] or "").find('"python-docs"') >= 0),
        (["doc_id=doc-0000"], lambda d, c: d["doc_id"].startswith("doc-0000")),
        (["doc_id=recipe", "doc_id=invoice"], lambda d, c: d["doc_id"] in ("recipe", "invoice-1042")),
        (["section=Batch embeddings at scale"], lambda d, c: c["section"] == "Batch embeddings at scale"),
        (["language=en", "doc_id=news"], lambda d, c: d["doc_id"].startswith("news")),
        (["language=de"], lambda d, c: False),
    ],
)
def test_where_keeps_only_the_chunks_that_match(sample_run, capsys, where, holds):
    out, _ = sample_run
    docs = {d["doc_id"]: d for d in table(out, "documents", ["doc_id", "metadata", "language"]).to_pylist()}
    chunks = table(out, "chunks", ["doc_id", "chunk_index", "section"]).to_pylist()
    allowed = {(c["doc_id"], c["chunk_index"]) for c in chunks if holds(docs[c["doc_id"]], c)}
    flags = [a for w in where for a in ("--where", w)]
    status, got, err = search(capsys, str(out), "a question about anything", "--top-k", "500", "--json", *flags)
    assert status == 0, err
    hits = json.loads(got[0])["hits"]
    assert {(h["doc_id"], h["chunk_index"]) for h in hits} == allowed  # every match, nothing else


def test_a_where_without_a_value_is_refused(sample_run, capsys):
    status, got, err = search(capsys, str(sample_run[0]), "q", "--where", "language")
    assert status == 2 and "expected FIELD=VALUE" in err


def test_row_mask_is_none_without_conditions(sample_run):
    assert filters.row_mask(open_run(str(sample_run[0])), []) is None


def test_a_where_that_matches_nothing_says_so(sample_run, capsys):
    status, got, _ = search(capsys, str(sample_run[0]), "q", "--where", "language=de")
    assert status == 0 and got[1] == "  (no chunk matches --where)"


@pytest.mark.parametrize("where", ["languge=en", "metadata.nosuchfield=x"])
def test_a_field_no_document_has_is_refused_naming_the_fields(sample_run, capsys, where):
    status, got, err = search(capsys, str(sample_run[0]), "q", "--where", where)
    name = where.partition("=")[0].removeprefix("metadata.")
    assert status == 2 and f"--where {name}: no document of" in err and "collection" in err
    assert len(err.strip().splitlines()) == 1
