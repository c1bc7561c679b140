import numpy as np
import pytest

from docbeam.pipeline.core.records import Segment
from docbeam.pipeline.encode.packing import Packer, PackSpec, pack_rows, split_rows, to_batch


def seg(n: int, uid: str = "d", index: int = 0) -> Segment:
    return Segment(
        uid=uid,
        doc_id=uid,
        kind="chunk",
        index=index,
        start_char=0,
        end_char=n,
        ids=np.arange(1, n + 1, dtype=np.int32),
    )


def test_split_rows_is_exact():
    shapes = PackSpec(rows=32).row_shapes
    assert shapes == (32, 8, 2, 1)
    for n in range(0, 200):
        parts = split_rows(n, shapes)
        assert sum(parts) == n and all(p in shapes for p in parts)


def test_rows_hold_whole_segments_and_respect_limits():
    rng = np.random.default_rng(0)
    spec = PackSpec(rows=4, seq_len=64, max_segments=5)
    segs = [seg(int(n), f"d{i}") for i, n in enumerate(rng.integers(3, 64, 300))]
    rows = pack_rows(segs, spec)
    assert sorted(s.uid for r in rows for s in r) == sorted(s.uid for s in segs)
    assert all(sum(s.n_tokens for s in r) <= 64 and len(r) <= 5 for r in rows)


def test_batch_layout_segment_ids_and_positions():
    b = to_batch([[seg(3, "a"), seg(2, "b")], [seg(4, "c")]], PackSpec(rows=2, seq_len=6))
    assert b.segment_ids.tolist() == [[1, 1, 1, 2, 2, 0], [1, 1, 1, 1, 0, 0]]
    assert b.positions.tolist() == [[0, 1, 2, 0, 1, 0], [0, 1, 2, 3, 0, 0]]
    assert b.tokens.tolist() == [[1, 2, 3, 1, 2, 0], [1, 2, 3, 4, 0, 0]]
    assert [(r, sid, s.uid) for r, sid, s in b.slots] == [(0, 1, "a"), (0, 2, "b"), (1, 1, "c")]
    assert b.real_tokens == 9


def test_packer_loses_nothing_wastes_little_and_uses_few_shapes():
    rng = np.random.default_rng(1)
    spec = PackSpec(rows=8, seq_len=128)
    packer = Packer(spec)
    segs = [seg(int(n), f"d{i}") for i, n in enumerate(np.clip(rng.lognormal(3.5, 0.8, 3000), 3, 128))]
    batches = [b for s in segs for b in packer.add(s)] + list(packer.flush())
    seen = sorted(s.uid for b in batches for _, _, s in b.slots)
    assert seen == sorted(s.uid for s in segs)  # every segment exactly once
    real = sum(b.real_tokens for b in batches)
    fed = sum(b.tokens.size for b in batches)
    assert 1 - real / fed <= 0.03, f"padding waste {1 - real / fed:.3f}"
    assert {b.shape[0] for b in batches} <= set(spec.row_shapes)


def test_packing_is_deterministic_whatever_the_arrival_order():
    rng = np.random.default_rng(2)
    segs = [seg(int(n), f"d{i}") for i, n in enumerate(rng.integers(3, 100, 200))]
    spec = PackSpec(rows=4, seq_len=128, pool_batches=100)  # one pool: order-free

    def run(order):
        p = Packer(spec)
        out = [b for s in order for b in p.add(s)] + list(p.flush())
        return [b.tokens.tobytes() + b.segment_ids.tobytes() for b in out]

    assert run(segs) == run(list(reversed(segs)))


def test_full_windows_leave_a_batch_at_a_time_without_waiting_for_the_pool():
    """A long document's windows nearly fill their rows alone: a batch of them goes to the
    encoder as soon as it is whole (a 32k-token pool would hold a 5,000-token document until
    the bundle ends, and progress inside it with it), with short segments in the room left."""
    spec = PackSpec(rows=4, seq_len=256, pool_batches=32)
    packer = Packer(spec)
    assert packer.add(seg(4, "c0")) == [] and packer.add(seg(120, "p0")) == []  # both wait for their pools
    windows = [seg(250, f"w{i}") for i in range(9)]
    out = [packer.add(w) for w in windows]
    assert [len(b) for b in out] == [0, 0, 0, 1, 0, 0, 0, 1, 0]
    first = out[3][0]
    assert first.shape == (4, 256) and {s.uid for _, _, s in first.slots} == {"w0", "w1", "w2", "w3", "c0"}
    rest = list(packer.flush())
    seen = sorted(s.uid for b in [first, out[7][0], *rest] for _, _, s in b.slots)
    assert seen == sorted(["c0", "p0"] + [w.uid for w in windows])  # every segment exactly once


def test_short_segments_get_short_rows_and_fill_the_room_long_rows_leave():
    """Extraction candidates (a few tokens) get 64-token rows of their own, where attention
    is over 64 tokens, and fill the room long segments leave in full-window rows (a padding
    token costs the whole layer stack; a filler token only attention over the longer row);
    they never open a full-window row of their own."""
    spec = PackSpec(rows=32, seq_len=256)
    assert spec.lengths == (256, 64) and spec.rows_for(64) == 128 and spec.segments_for(64) == 32
    assert PackSpec(rows=8, seq_len=128).lengths == (128,)  # a short window needs no short rows
    rng = np.random.default_rng(3)
    short = [seg(int(n), f"c{i}") for i, n in enumerate(rng.integers(3, 8, 4000))]
    long = [seg(int(n), f"d{i}") for i, n in enumerate(rng.integers(65, 256, 300))]

    def pack(segs):
        packer = Packer(spec)
        return [b for s in segs for b in packer.add(s)] + list(packer.flush())

    batches = pack(short + long)
    assert sorted(s.uid for b in batches for _, _, s in b.slots) == sorted(s.uid for s in short + long)
    wide = [b for b in batches if b.shape[1] == 256]
    long_rows = [{s.uid[0] for r2, _, s in b.slots if r2 == r} for b in wide for r in range(b.shape[0])]
    assert all("d" in kinds for kinds in long_rows)  # no full-window row of fillers alone
    assert sum("c" in kinds for kinds in long_rows) > len(long_rows) // 2  # most rows' room is filled
    assert {s.uid[0] for b in batches if b.shape[1] == 64 for _, _, s in b.slots} == {"c"}
    fed = sum(b.tokens.size for b in batches)
    apart = sum(b.tokens.size for b in pack(short) + pack(long))  # each kind in rows of its own
    real = sum(s.n_tokens for s in short + long)
    assert 1 - real / fed <= 0.02 and fed < apart - 0.5 * (apart - real), (fed, apart, real)


@pytest.mark.parametrize(("seq_len", "rows"), [(8192, 1), (2048, 2), (512, 3), (256, 1), (256, 32)])
def test_fillers_never_open_a_row_of_their_own_at_any_window_or_batch_size(seq_len, rows):
    """Rows held back for newcomers give their fillers back to the fillers' own pools: a row of
    length L never holds only segments that belong in shorter rows."""
    spec = PackSpec(rows=rows, seq_len=seq_len)
    rng = np.random.default_rng(seq_len + rows)
    lengths = np.concatenate([rng.integers(3, 64, 600), rng.integers(65, seq_len, 200)])
    segs = [seg(int(n), f"s{i}") for i, n in enumerate(rng.permutation(lengths))]
    packer = Packer(spec)
    batches = [b for s in segs for b in packer.add(s)] + list(packer.flush())
    assert sorted(s.uid for b in batches for _, _, s in b.slots) == sorted(s.uid for s in segs)
    for b in batches:
        length = b.shape[1]
        for r in range(b.shape[0]):
            row = [s for r2, _, s in b.slots if r2 == r]
            assert sum(s.n_tokens for s in row) <= length and len(row) <= spec.segments_for(length)
            assert max(spec.length_for(s.n_tokens) for s in row) == length, (length, [s.n_tokens for s in row])
