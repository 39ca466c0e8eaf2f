"""Content-defined chunks of large release files, so releases share every chunk a change did not touch.

A file is cut where the eight bytes before a position hash to a chosen pattern (about one position in
CHUNK_AVERAGE), with chunks kept between CHUNK_MIN and CHUNK_MAX bytes. Cuts depend on the nearby
bytes only, so an edit to one entry of context.json changes the chunk holding it (and the first
chunk, which holds the release's version) while every other chunk keeps its bytes and its hash.
Files up to CHUNK_MAX stay one chunk. Pure and deterministic: the same bytes always cut the same way.
"""

from __future__ import annotations

import numpy as np

CHUNK_MIN = 64 * 1024
CHUNK_AVERAGE = 256 * 1024  # a power of two: the hash's low bits select the cut points
CHUNK_MAX = 1024 * 1024  # also the size of a streamed slice (serving), so a chunk is one read
WINDOW = 8
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(40)
_MASK = np.uint64(CHUNK_AVERAGE - 1)
_SCAN = 4 * 1024 * 1024  # bytes hashed at a time (bounds the scan's memory at about 8 x this)


def _candidates(data: bytes) -> list[int]:
    """Every position p (the end of an eight-byte window) whose window hashes to the cut pattern.

    The windows starting at r, r + 8, r + 16 … are one little-endian uint64 array read in place, so
    the scan is eight multiplications per 64 bytes and no copy of the data.
    """
    view = memoryview(data)
    found: list[np.ndarray] = []
    for start in range(0, len(view), _SCAN):
        block = view[start : start + _SCAN + WINDOW - 1]
        for r in range(WINDOW):
            count = min((len(block) - r) // WINDOW, (_SCAN - r + WINDOW - 1) // WINDOW)
            if count <= 0:
                continue
            words = np.frombuffer(block, dtype="<u8", count=count, offset=r)
            hits = np.flatnonzero(((words * _MULTIPLIER) >> _SHIFT) & _MASK == 0)
            found.append(hits * WINDOW + (start + r + WINDOW))
    return sorted(np.concatenate(found).tolist()) if found else []


def chunk_bounds(data: bytes) -> list[int]:
    """The end offset of each chunk of `data` (the last is len(data)); [] for no bytes."""
    size = len(data)
    if size <= CHUNK_MAX:
        return [size] if size else []
    ends: list[int] = []
    start = 0
    for cut in _candidates(data):
        if cut - start < CHUNK_MIN or cut >= size:
            continue
        while cut - start > CHUNK_MAX:
            start += CHUNK_MAX
            ends.append(start)
        if cut - start >= CHUNK_MIN:
            ends.append(cut)
            start = cut
    while size - start > CHUNK_MAX:
        start += CHUNK_MAX
        ends.append(start)
    ends.append(size)
    return ends


def chunks_of(data: bytes) -> list[memoryview]:
    """`data` cut into its chunks (views, no copies)."""
    view, ends = memoryview(data), chunk_bounds(data)
    return [view[a:b] for a, b in zip([0, *ends], ends, strict=False)]
