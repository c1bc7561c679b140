"""Segments -> fixed-shape packed batches. Pure numpy: no Beam, no JAX.

Short windows from many documents share a row instead of padding it: each row holds
whole segments, told apart by segment ids 1..S (0 = padding), positions restarting at 0
in each segment. Rows are filled best-fit-decreasing over a pool of pending segments, so
waste stays at a few percent. Batches only ever take a handful of row counts
(`row_shapes`), so the encoder compiles once per shape; a tail that does not fill the
largest shape is split exactly into the smaller ones instead of being padded with rows.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from pipeline.core.records import Segment


@dataclass(frozen=True)
class PackSpec:
    rows: int = 32  # rows in a full batch
    seq_len: int = 256  # tokens per row (the model's window)
    max_segments: int = 64  # segments per row (pooling slots)
    pool_batches: int = 4  # pack once this many full batches of tokens are pending

    @property
    def row_shapes(self) -> tuple[int, ...]:
        """Batch row counts, largest first: rows, rows/4, rows/16, 1 (distinct, >= 1)."""
        return tuple(sorted({self.rows, max(1, self.rows // 4), max(1, self.rows // 16), 1}, reverse=True))


@dataclass
class PackedBatch:
    tokens: np.ndarray  # int32 [rows, seq_len]
    segment_ids: np.ndarray  # int32 [rows, seq_len]
    positions: np.ndarray  # int32 [rows, seq_len]
    slots: list[tuple[int, int, Segment]] = field(default_factory=list)  # (row, segment id, segment)

    @property
    def real_tokens(self) -> int:
        return int((self.segment_ids != 0).sum())

    @property
    def shape(self) -> tuple[int, int]:
        return self.tokens.shape


def _sort_key(s: Segment) -> tuple:
    # Longest first (best-fit decreasing), ties broken by identity: the same pool always
    # packs the same way, so repeated runs give bit-identical vectors.
    return (-s.n_tokens, s.uid, s.kind, s.index)


def pack_rows(segments: list[Segment], spec: PackSpec) -> list[list[Segment]]:
    """Best-fit decreasing: each segment goes to the fullest row it still fits in."""
    rows: list[list[Segment]] = []
    free: list[int] = []
    for seg in sorted(segments, key=_sort_key):
        if seg.n_tokens > spec.seq_len:
            raise ValueError(f"segment of {seg.n_tokens} tokens exceeds row length {spec.seq_len}")
        best = -1
        for r, room in enumerate(free):
            if seg.n_tokens <= room and len(rows[r]) < spec.max_segments and (best < 0 or room < free[best]):
                best = r
                if room == seg.n_tokens:
                    break
        if best < 0:
            rows.append([])
            free.append(spec.seq_len)
            best = len(rows) - 1
        rows[best].append(seg)
        free[best] -= seg.n_tokens
    return rows


def to_batch(rows: list[list[Segment]], spec: PackSpec) -> PackedBatch:
    shape = (len(rows), spec.seq_len)
    tokens, seg_ids, pos = (np.zeros(shape, np.int32) for _ in range(3))
    slots = []
    for r, row in enumerate(rows):
        at = 0
        for sid, seg in enumerate(row, start=1):
            n = seg.n_tokens
            tokens[r, at : at + n] = seg.ids
            seg_ids[r, at : at + n] = sid
            pos[r, at : at + n] = np.arange(n)
            slots.append((r, sid, seg))
            at += n
    return PackedBatch(tokens, seg_ids, pos, slots)


def split_rows(n: int, shapes: tuple[int, ...]) -> list[int]:
    """Exact decomposition of n rows into the allowed batch sizes, largest first."""
    out = []
    for size in shapes:
        while n >= size:
            out.append(size)
            n -= size
    return out


class Packer:
    """Accumulates segments; hands out full batches as soon as the pool allows."""

    def __init__(self, spec: PackSpec):
        self.spec = spec
        self.pending: list[Segment] = []
        self.pending_tokens = 0

    def add(self, seg: Segment) -> Iterator[PackedBatch]:
        self.pending.append(seg)
        self.pending_tokens += seg.n_tokens
        if self.pending_tokens >= self.spec.pool_batches * self.spec.rows * self.spec.seq_len:
            yield from self._emit(final=False)

    def flush(self) -> Iterator[PackedBatch]:
        yield from self._emit(final=True)

    def _emit(self, final: bool) -> Iterator[PackedBatch]:
        if not self.pending:
            return
        rows = pack_rows(self.pending, self.spec)
        # Fullest rows go out; the emptiest rows' segments wait to be packed with newcomers.
        rows.sort(key=lambda row: -sum(s.n_tokens for s in row))
        keep = 0 if final else min(len(rows), self.spec.rows)
        ready, held = rows[: len(rows) - keep], rows[len(rows) - keep :]
        sizes = (
            split_rows(len(ready), self.spec.row_shapes) if final else [self.spec.rows] * (len(ready) // self.spec.rows)
        )
        at = 0
        for size in sizes:
            yield to_batch(ready[at : at + size], self.spec)
            at += size
        held = ready[at:] + held
        self.pending = [s for row in held for s in row]
        self.pending_tokens = sum(s.n_tokens for s in self.pending)
