"""Segments -> fixed-shape packed batches. Pure numpy: no Beam, no JAX.

Short windows from many documents share a row instead of padding it: each row holds
whole segments, told apart by segment ids 1..S (0 = padding), positions restarting at 0
in each segment. Rows are filled best-fit-decreasing over a pool of pending segments, so
waste stays at a few percent. Batches only ever take a handful of row counts
(`row_shapes`), so the encoder compiles once per shape; a tail that does not fill the
largest shape is split exactly into the smaller ones instead of being padded with rows.

Long windows (--max-seq-len beyond 512, up to ModernBERT's 8,192): rows come in a few
lengths (`lengths`: the window, then quarters of it down to 512), and each segment goes to
the shortest row that holds it, so short documents never pay attention over 8,192 tokens.
Every length gets the same token budget per batch (`rows * seq_len`): fewer, longer rows.
Short segments (extraction candidates, sentences, label descriptions, short documents) get
rows of SHORT_ROW tokens of their own at any window: attention over 64 tokens instead of
256, and fewer segments per row to pool. Before a longer row goes out, shorter segments
fill the room its segments leave (the padding it would carry otherwise; a filler token pays
attention over the longer row, a padding token the same and the whole layer stack besides):
on the embed benchmark's 2,000-document corpora, in the CPU's batches of 4 rows, padding fell
from 7.7% to 6.3% and from 6.1% to 3.9% of the encoder's tokens, their cost in full-row token
units by 1.3% and 1.9% (`python -m tests.benchmarks.packing_cost`, which shows 32 rows too).
"""

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from docbeam.pipeline.core.flags import CPU_TOKENS_PER_BATCH, TOKENS_PER_BATCH
from docbeam.pipeline.core.records import Segment

MIN_BUCKET = 512  # the shortest row length long windows are split into
SHORT_ROW = 64  # rows for short segments, when the window is at least 4x longer
# The default token budgets of a batch (--batch-rows): 32 rows of 256, 16 of 512, ... 1 of 8,192 on
# accelerators; smaller on a CPU, where activations that stay in cache run faster per token (the
# FFN's float32 [tokens, 1536] is 50 MB at 8,192 tokens, 6 MB at 1,024; measured in the README).
POOL_TOKENS = 4 * TOKENS_PER_BATCH  # a length's pool is packed once this many tokens wait
MAX_DEFAULT_ROWS = 32
SNUG = 32  # a segment within 1/SNUG of its row's length fills the row alone (8 tokens at 256)


def tokens_per_batch(platform: str) -> int:
    return CPU_TOKENS_PER_BATCH if platform == "cpu" else TOKENS_PER_BATCH


def default_rows(seq_len: int, tokens: int = TOKENS_PER_BATCH) -> int:
    """Rows of `seq_len` tokens per batch when --batch-rows is not given (`tokens` per batch)."""
    return max(1, min(MAX_DEFAULT_ROWS, tokens // seq_len))


def pool_batches(rows: int, seq_len: int) -> int:
    """Full batches a pool waits for: POOL_TOKENS whatever the batch size (best-fit needs choice)."""
    return max(4, POOL_TOKENS // (rows * seq_len))


def spec_for(seq_len: int, platform: str, chips: int = 1, rows: int | None = None) -> "PackSpec":
    """The PackSpec of an encoder on `platform`: `rows` (--batch-rows), else the platform's
    token budget per batch, per chip on a TPU, and on a CPU a row at least for each of its
    `chips` devices; pools of POOL_TOKENS either way."""
    per_batch = default_rows(seq_len, tokens_per_batch(platform))
    rows = rows or {"tpu": per_batch * chips, "cpu": max(per_batch, chips)}.get(platform, per_batch)
    return PackSpec(rows=rows, seq_len=seq_len, pool_batches=pool_batches(rows, seq_len))


@dataclass(frozen=True)
class PackSpec:
    rows: int = 32  # rows in a full batch of the longest rows (seq_len)
    seq_len: int = 256  # tokens per row (the model's window)
    max_segments: int = 64  # segments per row (pooling slots), at least; long rows get more
    pool_batches: int = 4  # pack once this many full batches of tokens are pending
    fill: bool = True  # shorter segments fill the room left in longer rows (False: each in its own)

    @property
    def lengths(self) -> tuple[int, ...]:
        """Row lengths, longest first: seq_len, a quarter of it while >= MIN_BUCKET, SHORT_ROW."""
        out = [self.seq_len]
        while out[-1] // 4 >= MIN_BUCKET:
            out.append(out[-1] // 4)
        if self.seq_len >= 4 * SHORT_ROW:
            out.append(SHORT_ROW)
        return tuple(out)

    def length_for(self, n_tokens: int) -> int:
        return min(n for n in self.lengths if n >= n_tokens) if n_tokens <= self.seq_len else self.seq_len

    def rows_for(self, length: int) -> int:
        """Rows per full batch of rows this long: the same token budget at every length."""
        return max(1, self.rows * self.seq_len // length)

    def segments_for(self, length: int) -> int:
        """Pooling slots per row: max_segments (fewer in short rows, more in long ones)."""
        return max(min(self.max_segments, length // 2), length // 32)

    def shapes_for(self, length: int) -> tuple[int, ...]:
        """Batch row counts at one length, largest first: rows, rows/4, rows/16, 1 (distinct, >= 1)."""
        rows = self.rows_for(length)
        return tuple(sorted({rows, max(1, rows // 4), max(1, rows // 16), 1}, reverse=True))

    @property
    def row_shapes(self) -> tuple[int, ...]:
        return self.shapes_for(self.seq_len)


@dataclass
class PackedBatch:
    tokens: np.ndarray  # int32 [rows, seq_len]
    segment_ids: np.ndarray  # int32 [rows, seq_len]
    positions: np.ndarray  # int32 [rows, seq_len]
    pool_mask: np.ndarray  # bool [rows, seq_len]: tokens that take part in pooling
    max_segments: int  # pooling slots per row
    slots: list[tuple[int, int, Segment]] = field(default_factory=list)  # (row, segment id, segment)

    @property
    def real_tokens(self) -> int:
        return int((self.segment_ids != 0).sum())

    @property
    def shape(self) -> tuple[int, int]:
        return self.tokens.shape

    @property
    def is_flush(self) -> bool:
        return self.tokens.size == 0

    @classmethod
    def flush(cls) -> "PackedBatch":
        """The end of a bundle's batches: the encoder hands back the batch it keeps in flight."""
        empty = np.zeros((0, 0), np.int32)
        return cls(empty, empty, empty, np.zeros((0, 0), bool), 0)


def _sort_key(s: Segment) -> tuple:
    # Longest first (best-fit decreasing), ties broken by identity: the same pool always
    # packs the same way, so repeated runs give bit-identical vectors.
    return (-len(s.ids), s.uid, s.kind, s.index)


def pack_rows(
    segments: list[Segment], spec: PackSpec, length: int | None = None, fillers: list[Segment] | None = None
) -> list[list[Segment]]:
    """Best-fit decreasing: each segment goes to the fullest row it still fits in (the first
    such row on a tie). Open rows are kept sorted by free room, so finding it is a bisect.
    `fillers` (short segments waiting for rows of their own) then go, the same way, into the
    room left in these rows, never into a new row; the ones placed are removed from the list."""
    length = length or spec.seq_len
    slots = spec.segments_for(length)
    rows: list[list[Segment]] = []
    open_rows: list[tuple[int, int]] = []  # (free room, row index), sorted; full rows leave it

    def place(seg: Segment, may_open: bool) -> bool:
        n = len(seg.ids)
        at = bisect.bisect_left(open_rows, (n, -1))
        if at < len(open_rows):
            room, r = open_rows.pop(at)
        elif may_open:
            room, r = length, len(rows)
            rows.append([])
        else:
            return False
        rows[r].append(seg)
        if room - n > 0 and len(rows[r]) < slots:
            bisect.insort(open_rows, (room - n, r))
        return True

    for seg in sorted(segments, key=_sort_key):
        if len(seg.ids) > length:
            raise ValueError(f"segment of {len(seg.ids)} tokens exceeds row length {length}")
        place(seg, may_open=True)
    if fillers:
        fillers[:] = [seg for seg in sorted(fillers, key=_sort_key) if not place(seg, may_open=False)]
    return rows


def to_batch(rows: list[list[Segment]], spec: PackSpec, length: int | None = None) -> PackedBatch:
    length = length or spec.seq_len
    shape = (len(rows), length)
    tokens, seg_ids, pos = (np.zeros(shape, np.int32) for _ in range(3))
    pool_mask = np.zeros(shape, bool)
    slots = []
    for r, row in enumerate(rows):
        at = 0
        for sid, seg in enumerate(row, start=1):
            n = seg.n_tokens
            tokens[r, at : at + n] = seg.ids
            seg_ids[r, at : at + n] = sid
            pos[r, at : at + n] = np.arange(n)
            pool_mask[r, at + seg.pool_from : at + n] = True
            slots.append((r, sid, seg))
            at += n
    return PackedBatch(tokens, seg_ids, pos, pool_mask, spec.segments_for(length), slots)


def split_rows(n: int, shapes: tuple[int, ...]) -> list[int]:
    """Exact decomposition of n rows into the allowed batch sizes, largest first."""
    out = []
    for size in shapes:
        while n >= size:
            out.append(size)
            n -= size
    return out


class Packer:
    """Accumulates segments, one pool per row length; hands out full batches as soon as a
    pool allows. A segment that leaves less than 1/SNUG of its row free (a full window: most
    chunks of a long document) is a row of its own whatever the pool holds, so such rows go
    out a batch at a time without waiting: the encoder starts on a long document at once
    instead of at the pool's end, and waiting could only have added a few filler tokens."""

    def __init__(self, spec: PackSpec):
        self.spec = spec
        self.pending: dict[int, list[Segment]] = {n: [] for n in spec.lengths}
        self.pending_tokens = dict.fromkeys(spec.lengths, 0)
        self.snug: dict[int, list[Segment]] = {n: [] for n in spec.lengths}

    def add(self, seg: Segment) -> list[PackedBatch]:
        """The batches this segment completes (usually none: it joins its length's pool)."""
        n = len(seg.ids)
        length = self.spec.length_for(n)
        if length - n < length // SNUG:
            self.snug[length].append(seg)
            if len(self.snug[length]) < self.spec.rows_for(length):
                return []
            rows, self.snug[length] = self._pack(self.snug[length], length), []
            return [to_batch(rows, self.spec, length)]
        self.pending[length].append(seg)
        self.pending_tokens[length] += n
        if self.pending_tokens[length] >= self.spec.pool_batches * self.spec.rows_for(length) * length:
            return list(self._emit(length, final=False))
        return []

    def flush(self) -> Iterator[PackedBatch]:
        for length in self.spec.lengths:
            self.pending[length] += self.snug[length]
            self.snug[length] = []
            yield from self._emit(length, final=True)

    def _pack(self, segments: list[Segment], length: int) -> list[list[Segment]]:
        """pack_rows, then shorter segments fill the room that these rows leave (a 200-token
        chunk leaves 56): a filler token costs attention over the longer row, a padding token
        costs the whole layer stack; the rest keep waiting for rows of their own."""
        shorter = [n for n in self.spec.lengths if n < length] if self.spec.fill else []
        fillers = [s for n in shorter for s in self.pending[n]]
        rows = pack_rows(segments, self.spec, length, fillers)
        for n in shorter:
            self.pending[n] = [s for s in fillers if self.spec.length_for(s.n_tokens) == n]
            self.pending_tokens[n] = sum(s.n_tokens for s in self.pending[n])
        return rows

    def _emit(self, length: int, final: bool) -> Iterator[PackedBatch]:
        if not self.pending[length]:
            return
        rows = self._pack(self.pending[length], length)
        full = self.spec.rows_for(length)
        # Fullest rows go out; the emptiest rows' segments wait to be packed with newcomers.
        rows.sort(key=lambda row: -sum(s.n_tokens for s in row))
        keep = 0 if final else min(len(rows), full)
        ready, held = rows[: len(rows) - keep], rows[len(rows) - keep :]
        sizes = split_rows(len(ready), self.spec.shapes_for(length)) if final else [full] * (len(ready) // full)
        at = 0
        for size in sizes:
            yield to_batch(ready[at : at + size], self.spec, length)
            at += size
        # Held segments wait in their own pools: a filler that went back to this length's pool
        # could open a row of fillers alone next time, attention over the long row for nothing.
        self.pending[length] = []
        for seg in (seg for row in ready[at:] + held for seg in row):
            self.pending[self.spec.length_for(seg.n_tokens)].append(seg)
        self.pending_tokens = {n: sum(s.n_tokens for s in segs) for n, segs in self.pending.items()}
