"""How a run stores its vectors: `--dims N` (Matryoshka truncation) and `--vector-dtype`.

The one place vectors are truncated, quantised and dequantised: the Parquet writers, the
`--sink` stores, `docbeam embed` and `docbeam search` all call these functions, so a query
is shaped exactly as the chunks it is compared with.

- truncate: the first N dimensions, L2-normalised again (sentence-transformers' `truncate_dim`
  keeps the first N; the renormalisation makes inner product = cosine, as for full vectors)
- float16: a cast; int8: sentence-transformers' `quantize_embeddings(..., "int8", ranges)`
  byte for byte (per dimension, 256 buckets between the calibration minimum and maximum,
  floor, clipped); binary: its "ubinary" (one bit per dimension, x > 0, packed, uint8)

Pure numpy: no Beam, no model.
"""

from dataclasses import dataclass

import numpy as np

FLOAT32, FLOAT16, INT8, BINARY = "float32", "float16", "int8", "binary"
VECTOR_DTYPES = (FLOAT32, FLOAT16, INT8, BINARY)
# numpy type of a stored value, per --vector-dtype
STORED = {FLOAT32: np.float32, FLOAT16: np.float16, INT8: np.int8, BINARY: np.uint8}
RANGES_FILE = "_vectors/int8_ranges.json"  # under --output: the int8 calibration ranges, per table


@dataclass(frozen=True)
class VectorFormat:
    """What `embedding` holds: `dims` of the model's `model_dim` (None: all), as `dtype`."""

    model_dim: int
    dims: int | None = None
    dtype: str = FLOAT32

    def __post_init__(self):
        if self.dtype not in VECTOR_DTYPES:
            raise ValueError(f"--vector-dtype {self.dtype!r}: choose from {', '.join(VECTOR_DTYPES)}")
        if self.dims is not None and not 1 <= self.dims <= self.model_dim:
            raise ValueError(f"--dims {self.dims}: the model's vectors have {self.model_dim} dimensions")

    @property
    def dim(self) -> int:
        """Dimensions kept."""
        return self.dims or self.model_dim

    @property
    def width(self) -> int:
        """Values per stored vector: one per dimension, or one byte per 8 dimensions (binary)."""
        return (self.dim + 7) // 8 if self.dtype == BINARY else self.dim

    @property
    def default(self) -> bool:
        """The full float32 vectors the encoder gives (what --reuse can convert from)."""
        return self.dims in (None, self.model_dim) and self.dtype == FLOAT32

    @property
    def bytes_per_vector(self) -> int:
        return self.width * np.dtype(STORED[self.dtype]).itemsize

    def record(self) -> dict:
        """The manifest's `vectors` record (without the int8 ranges)."""
        return {
            "model_dim": self.model_dim,
            "dims": self.dim,
            "dtype": self.dtype,
            "bytes_per_vector": self.bytes_per_vector,
        }

    @classmethod
    def of_record(cls, record: dict | None, model_dim: int) -> "VectorFormat":
        """The format a manifest records (a run from before --dims/--vector-dtype: full float32)."""
        record = record or {}
        dims = record.get("dims")
        return cls(model_dim, None if dims is None or dims == model_dim else int(dims), record.get("dtype") or FLOAT32)

    def shape(self, vectors: np.ndarray, ranges: np.ndarray | None = None) -> np.ndarray:
        """Full float vectors [n, model_dim] -> what this format stores [n, width]."""
        v = truncate(vectors, self.dims)
        return quantize(v, self.dtype, ranges)

    def truncated(self, vectors: np.ndarray) -> np.ndarray:
        return truncate(vectors, self.dims)


def truncate(vectors: np.ndarray, dims: int | None) -> np.ndarray:
    """The first `dims` dimensions, each row L2-normalised again (a zero row stays zero); float32."""
    v = np.asarray(vectors, np.float32)
    if dims is None or dims >= v.shape[-1]:
        return v
    v = v[..., :dims]
    norms = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.where(norms > 0, norms, 1.0)


def calibration_ranges(vectors: np.ndarray) -> np.ndarray:
    """[2, dim] float32: per dimension the minimum and the maximum (sentence-transformers'
    `_get_quantization_ranges` over calibration embeddings)."""
    v = np.asarray(vectors, np.float32)
    return np.vstack((np.min(v, axis=0), np.max(v, axis=0)))


def merge_ranges(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    """The ranges of two sets of vectors together (min of minima, max of maxima)."""
    if a is None or b is None:
        return b if a is None else a
    return np.vstack((np.minimum(a[0], b[0]), np.maximum(a[1], b[1]))).astype(np.float32)


def int8_steps(ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts, steps) per dimension: code c decodes to starts + (c + 128) * steps."""
    r = np.asarray(ranges, np.float32)
    starts = r[0, :]
    steps = (r[1, :] - starts) / 255
    return starts, np.where(steps == 0, 1, steps)  # a constant dimension: one bucket, not a division by 0


def quantize(vectors: np.ndarray, dtype: str, ranges: np.ndarray | None = None) -> np.ndarray:
    """Float vectors [n, d] as `dtype` stores them (int8 needs `ranges`, [2, d])."""
    v = np.asarray(vectors, np.float32)
    if dtype == FLOAT32:
        return v
    if dtype == FLOAT16:
        return v.astype(np.float16)
    if dtype == INT8:
        if ranges is None:
            raise ValueError("int8 vectors need calibration ranges")
        starts, steps = int8_steps(ranges)
        # The order of operations of sentence-transformers' quantize_embeddings, in float32: the
        # same bytes for the same vectors and ranges. A value outside the ranges is clipped.
        buckets = np.clip(np.floor((v - starts) / steps), 0, 255)
        return (buckets - 128).astype(np.int8)
    if dtype == BINARY:
        return np.packbits(v > 0, axis=-1)
    raise ValueError(f"unknown vector dtype {dtype!r}")


def dequantize(stored: np.ndarray, dtype: str, dim: int, ranges: np.ndarray | None = None) -> np.ndarray:
    """Stored vectors [n, width] back as float32 [n, dim] in the query's coordinates: int8 as the
    bottom of its bucket (sentence-transformers' rescoring), binary as +-1/sqrt(dim) (unit length:
    a query's score against it is a cosine)."""
    s = np.asarray(stored)
    if dtype in (FLOAT32, FLOAT16):
        return s.astype(np.float32)
    if dtype == INT8:
        if ranges is None:
            raise ValueError("int8 vectors need calibration ranges")
        starts, steps = int8_steps(ranges)
        return ((s.astype(np.float32) + 128) * steps + starts).astype(np.float32)
    if dtype == BINARY:
        bits = np.unpackbits(s.astype(np.uint8), axis=-1)[..., :dim]
        return ((bits.astype(np.float32) * 2 - 1) / np.sqrt(dim)).astype(np.float32)
    raise ValueError(f"unknown vector dtype {dtype!r}")


def ranges_record(ranges: dict[str, np.ndarray]) -> dict[str, list[list[float]]]:
    """Per table, [[minima], [maxima]] as JSON keeps them (float32 values survive the round trip)."""
    return {table: [[float(x) for x in row] for row in np.asarray(r, np.float32)] for table, r in ranges.items()}


def ranges_of_record(record: dict | None) -> dict[str, np.ndarray]:
    return {table: np.asarray(r, np.float32) for table, r in (record or {}).items()}
