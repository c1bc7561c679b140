"""The path from the encoder to assembly: an encoded batch's vectors leave keyed by document in
lists, shared vectors apart, and Assemble reads the lists as it read single vectors."""

import numpy as np

from docbeam.pipeline.core.records import SegmentVector
from docbeam.pipeline.extractors import SHARED_UID
from docbeam.pipeline.graph.dofns import VectorsByDoc


def vec(uid: str, doc_id: str, index: int, kind: str = "chunk") -> SegmentVector:
    return SegmentVector(
        uid=uid,
        doc_id=doc_id,
        kind=kind,
        index=index,
        start_char=0,
        end_char=1,
        n_tokens=1,
        vector=np.ones(4, np.float32),
        attention="reference",
    )


def test_a_batch_is_split_by_document_and_shared_vectors_go_apart():
    from apache_beam.pvalue import TaggedOutput

    batch = [vec("a", "A", 0), vec("b", "B", 0), vec(SHARED_UID, "", 0, "labels"), vec("a", "A", 1), vec("b2", "B", 0)]
    out = list(VectorsByDoc().process(batch))
    shared = [o.value for o in out if isinstance(o, TaggedOutput)]
    assert [o.tag for o in out if isinstance(o, TaggedOutput)] == [VectorsByDoc.SHARED]
    assert [v.uid for v in shared] == [SHARED_UID]
    keyed = dict(o for o in out if not isinstance(o, TaggedOutput))
    assert [(v.uid, v.index) for v in keyed["A"]] == [("a", 0), ("a", 1)]
    assert [v.uid for v in keyed["B"]] == ["b", "b2"]  # same doc_id, other records: the duplicate rule decides
    assert sum(len(v) for v in keyed.values()) + len(shared) == len(batch)
