import numpy as np

from docbeam.pipeline.core.records import DocInfo, SegmentVector
from docbeam.pipeline.encode.doc_pooling import doc_embedding
from docbeam.pipeline.graph.assemble import assemble, pick_winner


def vec(uid, index, n, v, kind="chunk"):
    v = np.asarray(v, np.float32)
    return SegmentVector(
        uid=uid,
        doc_id="id",
        kind=kind,
        index=index,
        start_char=index * 10,
        end_char=index * 10 + 9,
        n_tokens=n,
        vector=v / np.linalg.norm(v),
        attention="native",
    )


def info(uid="u", source="s", row=0, n_segments=2):
    return DocInfo(
        uid=uid, doc_id="id", source=source, row=row, n_chars=100, n_tokens=30, n_chunks=2, n_segments=n_segments
    )


def test_doc_embedding_is_token_weighted_and_normalised():
    a, b = vec("u", 0, 30, [1, 0]), vec("u", 1, 10, [0, 1])
    e = doc_embedding(np.stack([a.vector, b.vector]), [a.n_tokens, b.n_tokens])
    assert np.allclose(e, np.array([3, 1]) / np.sqrt(10), atol=1e-6)


def test_assemble_orders_chunks_and_checks_completeness():
    out = assemble(info(), [vec("u", 1, 5, [0, 1]), vec("u", 0, 5, [1, 0])], "m")
    assert [c["chunk_index"] for c in out.chunks] == [0, 1]
    assert out.document["n_chunks"] == 2 and out.document["attention"] == "native"
    missing = assemble(info(n_segments=3), [vec("u", 0, 5, [1, 0]), vec("u", 1, 5, [0, 1])], "m")
    assert missing.error == "incomplete"


def test_duplicate_rule_keeps_smallest_source_row_in_any_order():
    infos = [info("c", "b.jsonl", 0), info("a", "a.jsonl", 9), info("b", "a.jsonl", 3)]
    for order in (infos, infos[::-1]):
        kept, dupes = pick_winner(order)
        assert (kept.source, kept.row) == ("a.jsonl", 3)
        assert sorted((d.source, d.row) for d in dupes) == [("a.jsonl", 9), ("b.jsonl", 0)]
        assert all(d.error == "duplicate_doc_id" and "a.jsonl row 3" in d.message for d in dupes)
