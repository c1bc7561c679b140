"""A run's chunks.faiss, checked before faiss reads it.

faiss allocates what a file's header says before it can tell the file is short: nlist 2^50 in
the inverted lists' header is a std::bad_alloc, and a smaller lie is memory zeroed until the
process is killed. So the header `docbeam index` writes (faiss's IndexIVFFlat layout,
faiss/impl/index_write.cpp, little-endian) is read here first: the kind of index, its
dimension, metric, vector and list counts against the run's, and the file's size against what
those imply (on gs://, before the file is downloaded).
"""

import io
import struct

from docbeam.pipeline.io import storage
from docbeam.pipeline.search import index as ivf

IVF_FLAT, FLAT_IP, ARRAY_LISTS = b"IwFl", b"IxFI", b"ilar"  # faiss's fourccs
INNER_PRODUCT = 0  # faiss.METRIC_INNER_PRODUCT
IVF_HEADER = 53  # fourcc, d, ntotal, two unused words, is_trained, metric, nlist, nprobe
FLAT_HEADER = 45  # the coarse quantizer's: fourcc, d, ntotal, two unused, is_trained, metric, floats
LISTS_HEADER = 29  # direct map (kind, entries), then the inverted lists' fourcc, nlist, code size
SLACK = 256  # the headers, and the list sizes' own counts


def problem(path: str, rows: int, dim: int) -> str | None:
    """Why `path` is not the IVF-Flat index `docbeam index` writes for `rows` vectors of `dim`
    floats (None: its headers and size are). Reads a few hundred bytes; skips the centroids."""
    with storage.open_read(path, buffer_bytes=64 << 10) as fh:
        size = fh.seek(0, io.SEEK_END)
        fh.seek(0)
        why, nlist = _ivf_header(fh.read(IVF_HEADER), size, rows, dim)
        if why or (why := _centroids(fh.read(FLAT_HEADER), nlist, dim)):
            return why
        fh.seek(nlist * dim * 4, io.SEEK_CUR)
        return _lists(fh.read(LISTS_HEADER), nlist, dim)


def largest(rows: int, dim: int, nlist: int) -> int:
    """The most bytes such an index takes: centroids, list sizes, then each vector and its id."""
    return SLACK + nlist * (4 * dim + 16) + rows * (4 * dim + 8)


def smallest(rows: int, dim: int, nlist: int) -> int:
    """The fewest: its headers, centroids, and each vector and its id (a shorter file was cut)."""
    return IVF_HEADER + FLAT_HEADER + nlist * dim * 4 + LISTS_HEADER + rows * (4 * dim + 8)


# (struct format, offset) of d, ntotal, metric and nlist in the IVF header
_IVF_FIELDS = (("<i", 4), ("<q", 8), ("<i", 33), ("<Q", 37))


def _ivf_header(head: bytes, size: int, rows: int, dim: int) -> tuple[str | None, int]:
    """(why not, nlist) from the index's own header."""
    if len(head) < IVF_HEADER or head[:4] != IVF_FLAT:
        return f"not a faiss IVF-Flat index (it starts {head[:4]!r}, not {IVF_FLAT!r})", 0
    (d,), (ntotal,), (metric,), (nlist,) = (struct.unpack_from(f, head, at) for f, at in _IVF_FIELDS)
    if d != dim:
        return f"its vectors have {d} floats, the run's {dim}", nlist
    if ntotal != rows:
        return f"it holds {ntotal} vectors, the run has {rows} chunks", nlist
    if metric != INNER_PRODUCT:
        return f"its metric is {metric}, not inner product ({INNER_PRODUCT})", nlist
    if not 1 <= nlist <= ivf.MAX_LISTS:
        return f"it has {nlist:,} lists; docbeam makes 1 to {ivf.MAX_LISTS:,}", nlist
    if size > largest(rows, dim, nlist):
        return f"{size:,} bytes, more than the {largest(rows, dim, nlist):,} such an index takes", nlist
    if size < smallest(rows, dim, nlist):
        return f"{size:,} bytes, fewer than the {smallest(rows, dim, nlist):,} such an index takes (cut short?)", nlist
    return None, nlist


def _centroids(flat: bytes, nlist: int, dim: int) -> str | None:
    fields = struct.unpack_from("<4siq", flat) + struct.unpack_from("<iQ", flat, 33) if len(flat) == FLAT_HEADER else ()
    if fields != (FLAT_IP, dim, nlist, INNER_PRODUCT, nlist * dim):  # centroids as a count of floats
        return f"its centroids are not {nlist} flat inner-product vectors of {dim} floats"
    return None


def _lists(tail: bytes, nlist: int, dim: int) -> str | None:
    fields = struct.unpack_from("<BQ4sQQ", tail) if len(tail) == LISTS_HEADER else ()
    if fields != (0, 0, ARRAY_LISTS, nlist, 4 * dim):  # no direct map, then nlist lists of vectors
        return f"its inverted lists are not {nlist} lists of {dim}-float vectors"
    return None
