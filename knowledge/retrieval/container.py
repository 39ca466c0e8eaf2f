"""A safe, deterministic byte container for named NumPy arrays plus JSON metadata (no pickle)."""

from __future__ import annotations

import json
import mmap
import struct
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAGIC = b"EVERGREEN-INDEX\n"
_LENGTH = struct.Struct("<Q")
_ALIGN = 16
# Only plain numeric dtypes may be read back: an object dtype would be a pickle in disguise.
ALLOWED_DTYPES = frozenset({"<i2", "<i4", "<i8", "<u1", "<u4", "<u8", "<f4", "<f8", "|u1", "|i1"})


class ContainerError(ValueError):
    """The bytes are not an index this version of Evergreen can read."""


def _padding(size: int) -> int:
    return -size % _ALIGN


def pack_arrays(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> bytes:
    """Serialize arrays (little-endian, aligned) after a sorted-key JSON header: same input, same bytes."""
    little = {name: _little(array) for name, array in arrays.items()}
    header = arrays_header(meta, {name: (array.dtype.str, array.shape) for name, array in little.items()})
    chunks: list[bytes] = []
    for name in sorted(little):
        raw = little[name].tobytes()
        chunks.append(raw + b"\0" * _padding(len(raw)))
    return b"".join([header, *chunks])


def _little(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    return array.astype(array.dtype.newbyteorder("<"), copy=False)


def arrays_header(meta: Mapping[str, Any], specs: Mapping[str, tuple[str, tuple[int, ...]]]) -> bytes:
    """What `pack_arrays` writes before the arrays, from each array's (dtype, shape): the arrays follow in
    name order, each padded to the alignment. A writer that streams an array it never holds whole writes
    this, then each array's bytes and `array_padding` of its size."""
    layout: dict[str, dict[str, Any]] = {}
    offset = 0
    for name in sorted(specs):
        dtype, shape = specs[name]
        if dtype not in ALLOWED_DTYPES:
            raise ContainerError(f"array {name!r} has unsupported dtype {dtype}")
        size = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        layout[name] = {"dtype": dtype, "shape": list(shape), "offset": offset}
        offset += size + _padding(size)
    header = json.dumps(
        {"meta": meta, "arrays": layout},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()
    header += b" " * _padding(len(MAGIC) + _LENGTH.size + len(header))
    return b"".join([MAGIC, _LENGTH.pack(len(header)), header])


def array_padding(size: int) -> bytes:
    """The zero bytes after an array of `size` bytes."""
    return b"\0" * _padding(size)


@dataclass(frozen=True)
class Run:
    """An array given as the pieces of its bytes, written as they come and never joined (a writer holds
    one piece at a time): its dtype, its length in items, and the pieces, iterated once."""

    dtype: str
    count: int
    pieces: Iterable[bytes | memoryview]
    shape: tuple[int, ...] = ()  # its shape in the header when not (count,): count items in all

    @classmethod
    def of_bytes(cls, pieces: Sequence[bytes | memoryview]) -> Run:
        """A byte array (uint8) made of `pieces`."""
        return cls("|u1", sum(memoryview(piece).nbytes for piece in pieces), pieces)


def pack_pieces(meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray | Run]) -> Iterator[bytes | memoryview]:
    """What pack_arrays joins, piece by piece: the header, then each array's bytes (a view, not a copy,
    when it is already little-endian and contiguous) and its padding, so a writer never holds two copies.
    A `Run` is written as its pieces; one that gives other than its count's bytes is a ContainerError."""
    runs = {name: array for name, array in arrays.items() if isinstance(array, Run)}
    little = {name: _little(array) for name, array in arrays.items() if not isinstance(array, Run)}
    specs = {name: (array.dtype.str, array.shape) for name, array in little.items()}
    yield arrays_header(meta, specs | {name: (run.dtype, run.shape or (run.count,)) for name, run in runs.items()})
    for name in sorted(arrays):
        if name in runs:
            size = yield from _run_pieces(name, runs[name])
        else:
            size = little[name].nbytes
            if size:
                yield little[name].reshape(-1).view(np.uint8).data
        if _padding(size):
            yield array_padding(size)


def _run_pieces(name: str, run: Run) -> Generator[bytes | memoryview, None, int]:
    """The run's non-empty pieces; returns their size, checked against the header's."""
    size, expected = 0, run.count * np.dtype(run.dtype).itemsize
    for piece in run.pieces:
        length = memoryview(piece).nbytes
        if length:
            size += length
            yield piece
    if size != expected:
        raise ContainerError(f"array {name!r} gave {size} bytes where its header says {expected}")
    return size


def unpack_arrays(data: bytes | mmap.mmap) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read what `pack_arrays` wrote; arrays are read-only views into `data` (no copies: a mapped file
    stays in the page cache, shared by every process that maps it)."""
    if data[: len(MAGIC)] != MAGIC:
        raise ContainerError("not an Evergreen index")
    start = len(MAGIC) + _LENGTH.size
    if len(data) < start:
        raise ContainerError("truncated index header")
    (header_length,) = _LENGTH.unpack_from(data, len(MAGIC))
    try:
        header = json.loads(data[start : start + header_length])
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ContainerError("corrupt index header") from error
    body = memoryview(data)[start + header_length :]
    arrays: dict[str, np.ndarray] = {}
    for name, spec in header["arrays"].items():
        dtype = str(spec["dtype"])
        if dtype not in ALLOWED_DTYPES:
            raise ContainerError(f"array {name!r} has unsupported dtype {dtype}")
        shape = tuple(int(n) for n in spec["shape"])
        count = int(np.prod(shape, dtype=np.int64))
        end = int(spec["offset"]) + count * np.dtype(dtype).itemsize
        if int(spec["offset"]) < 0 or end > len(body):
            raise ContainerError(f"array {name!r} lies outside the index")
        arrays[name] = np.frombuffer(body, dtype=dtype, count=count, offset=int(spec["offset"])).reshape(shape)
    return dict(header["meta"]), arrays
