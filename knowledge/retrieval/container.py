"""A safe, deterministic byte container for named NumPy arrays plus JSON metadata (no pickle)."""

from __future__ import annotations

import json
import mmap
import struct
from collections.abc import Iterator, Mapping, Sequence
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


def pack_pieces(
    meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray], *, runs: Mapping[str, Sequence[bytes]] | None = None
) -> Iterator[bytes | memoryview]:
    """What pack_arrays joins, piece by piece: the header, then each array's bytes (a view, not a copy,
    when it is already little-endian and contiguous) and its padding, so a writer never holds two copies.
    `runs`: byte arrays (uint8) given as the pieces they are made of, written as they are, never joined."""
    little = {name: _little(array) for name, array in arrays.items()}
    specs = {name: (array.dtype.str, array.shape) for name, array in little.items()}
    runs = runs or {}
    sizes = {name: sum(map(len, pieces)) for name, pieces in runs.items()}
    yield arrays_header(meta, specs | {name: ("|u1", (size,)) for name, size in sizes.items()})
    for name in sorted(specs.keys() | sizes.keys()):
        if name in runs:
            size = sizes[name]
            yield from (piece for piece in runs[name] if piece)
        else:
            size = little[name].nbytes
            if size:
                yield little[name].reshape(-1).view(np.uint8).data
        if _padding(size):
            yield array_padding(size)


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
