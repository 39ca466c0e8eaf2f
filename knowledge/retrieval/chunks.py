"""Content-defined chunks of release files, so releases share every chunk a change did not touch.

A file is cut where the eight bytes before a position hash to a chosen pattern (about one position in
CHUNK_AVERAGE), with chunks kept between CHUNK_MIN and CHUNK_MAX bytes. Cuts depend on the nearby
bytes only, so an edit to one entry of context.json changes the chunk holding it (and the first
chunk, which holds the release's version) while every other chunk keeps its bytes and its hash.
Chunks are small (8 KiB on average) because every publish changes each text file in a place or two
(llms-full.txt, the category files, llms.txt, index.html.md): a large chunk around each place was
most of what a publish stored (issue 18 §4). A file up to its sizes' maximum is one chunk. Pure and
deterministic: the same bytes always cut the same way.

A compiled index is cut finer (INDEX_CHUNKS): it is term-major, so one entry's change touches one
place in the posting list of each of its terms (about a hundred, spread over the whole file), and
only small chunks leave most of the file's bytes untouched (issue 18 §3-4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CHUNK_MIN = 2 * 1024
CHUNK_AVERAGE = 8 * 1024  # a power of two: the hash's low bits select the cut points
CHUNK_MAX = 64 * 1024  # a streamed slice (serving) reads the chunks it covers in one query
WINDOW = 8
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(40)
_SCAN = 1024 * 1024  # bytes hashed at a time: the hash arrays stay in a core's cache (twice as fast as 4 MiB)


@dataclass(frozen=True)
class ChunkSizes:
    minimum: int
    average: int  # a power of two
    maximum: int
    words: int = 1  # eight-byte words in the window whose hash picks the cut points


FILE_CHUNKS = ChunkSizes(CHUNK_MIN, CHUNK_AVERAGE, CHUNK_MAX)
INDEX_CHUNKS = ChunkSizes(512, 2 * 1024, 8 * 1024, words=8)


# Each earlier word's constant, (2 * back + 1) * _MULTIPLIER wrapped to 64 bits: one multiplication per
# word instead of two, and the same sums (multiplication modulo 2**64 is associative).
_BACK = [np.uint64((2 * back + 1) * int(_MULTIPLIER) % 2**64) for back in range(64)]


def _window_hashes(block: memoryview, r: int, count: int, words: int, buffers: np.ndarray) -> np.ndarray:
    """The hash of each window of `words` eight-byte words starting at r, r + 8 … (`count` windows),
    computed in `buffers` (two rows of at least `count`), which the scan of a whole file reuses: fresh
    arrays for every block cost page faults, and rows of _SCAN / 8 words stay in a core's cache."""
    read = np.frombuffer(block, dtype="<u8", count=count + words - 1, offset=r)
    combined, scratch = buffers[0, :count], buffers[1, :count]
    np.copyto(combined, read[words - 1 :])
    for back in range(1, words):  # earlier words, each times its own odd constant (wrapping), in place
        np.multiply(read[words - 1 - back : words - 1 - back + count], _BACK[back], out=scratch)
        combined += scratch
    combined *= _MULTIPLIER
    combined >>= _SHIFT
    return combined


def _candidates(data: bytes, sizes: ChunkSizes) -> list[int]:
    """Every position p (the end of a window of sizes.words eight-byte words) whose window hashes to the
    cut pattern.

    The windows starting at r, r + 8, r + 16 … are one little-endian uint64 array read in place, so
    the scan is eight multiplications per 64 bytes and no copy of the data (one window word). A wider
    window finds cut points in data of few distinct words (an index's passage-block masks, its seed
    weights), where every eight-byte window would hash alike and the chunks would be cut by size.
    """
    view, mask, span = memoryview(data), np.uint64(sizes.average - 1), sizes.words * WINDOW
    found: list[np.ndarray] = []
    buffers = np.empty((2, _SCAN // WINDOW + 1), dtype=np.uint64)
    for start in range(0, len(view), _SCAN):
        block = view[start : start + _SCAN + span - 1]
        for r in range(WINDOW):
            count = min((len(block) - r) // WINDOW - sizes.words + 1, (_SCAN - r + WINDOW - 1) // WINDOW)
            if count <= 0:
                continue
            hits = np.flatnonzero(_window_hashes(block, r, count, sizes.words, buffers) & mask == 0)
            found.append(hits * WINDOW + (start + r + span))
    return sorted(np.concatenate(found).tolist()) if found else []


def chunk_bounds(data: bytes, sizes: ChunkSizes = FILE_CHUNKS) -> list[int]:
    """The end offset of each chunk of `data` (the last is len(data)); [] for no bytes. A file up to
    sizes.maximum is one chunk."""
    size = len(data)
    if size <= sizes.maximum:
        return [size] if size else []
    ends: list[int] = []
    start = 0
    for cut in _candidates(data, sizes):
        if cut - start < sizes.minimum or cut >= size:
            continue
        while cut - start > sizes.maximum:
            start += sizes.maximum
            ends.append(start)
        if cut - start >= sizes.minimum:
            ends.append(cut)
            start = cut
    while size - start > sizes.maximum:
        start += sizes.maximum
        ends.append(start)
    ends.append(size)
    return ends


def chunks_of(data: bytes, sizes: ChunkSizes = FILE_CHUNKS) -> list[memoryview]:
    """`data` cut into its chunks (views, no copies)."""
    view, ends = memoryview(data), chunk_bounds(data, sizes)
    return [view[a:b] for a, b in zip([0, *ends], ends, strict=False)]
