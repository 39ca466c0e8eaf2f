"""Content-defined chunks of release files, so releases share every chunk a change did not touch.

Files are cut by FastCDC (the 2020 paper's algorithm, from the pinned `pyfastcdc`, compiled): a
cut falls where a rolling gear hash of the bytes before it matches a pattern, with chunks kept
between the sizes' minimum and maximum and their sizes normalised around average + minimum (the
hash is not tested in a chunk's first `minimum` bytes). Cuts depend on the nearby bytes only, so an
edit to one entry of context.json changes the chunk holding it (and the first chunk, which holds the
release's version) while every other chunk keeps its bytes and its hash. Chunks are small (about
10 KiB on average) because every publish changes each text file in a place or two (llms-full.txt,
the category files, llms.txt, index.html.md): a large chunk around each place was most of what a
publish stored (issue 18 §4). A file up to its sizes' maximum is one chunk. Pure and deterministic:
the same bytes always cut the same way (tests/retrieval/test_chunks.py pins some cut points, so a
new version of the library that cut otherwise would be noticed; stored chunks are addressed by their
content, so such a change costs one publish's worth of new chunks, never a wrong file).

FastCDC replaced a numpy hash of eight-byte windows (issue 18 §3): at 100,000 entries that took 1.7 s
of CPU to cut the index and 0.27 s for context.json, against 0.08 and 0.07 s now, with the same
bytes stored per one-entry publish (README, Performance).

A compiled index is cut finer (INDEX_CHUNKS): it is term-major, so one entry's change touches one
place in the posting list of each of its terms (about a hundred, spread over the whole file), and
only small chunks leave most of the file's bytes untouched (issue 18 §3-4).

Large files are cut coarser (sized_for): every chunk is also a part row of every release that holds the
file, and at 100,000 entries the rows of 2 KiB index chunks and 8 KiB context.json chunks were ten
times the bytes a one-entry publish stored.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from pyfastcdc import FastCDC

CHUNK_MIN = 2 * 1024
CHUNK_AVERAGE = 8 * 1024  # a power of two: the gear hash's masks select the cut points
CHUNK_MAX = 64 * 1024  # a streamed slice (serving) reads the chunks it covers in one query


@dataclass(frozen=True)
class ChunkSizes:
    minimum: int
    average: int  # a power of two
    maximum: int


FILE_CHUNKS = ChunkSizes(CHUNK_MIN, CHUNK_AVERAGE, CHUNK_MAX)
INDEX_CHUNKS = ChunkSizes(512, 2 * 1024, 8 * 1024)
# What a chunk costs each release that holds it besides its bytes: its part row and the row's indexes in
# PostgreSQL (165 bytes measured on a 10,000-entry release; bench.publish reports the release tables).
PART_ROW_BYTES = 165
# Larger chunks would make a streamed slice of a file (1 MiB) read far beyond its range.
AVERAGE_CEILING = 64 * 1024


def sized_for(base: ChunkSizes, size: int, *, places: int) -> ChunkSizes:
    """`base` scaled for a file of `size` bytes in which a publish changes about `places` chunks.

    Each chunk costs every release a part row, and each changed chunk its bytes, so a publish adds about
    size / average x PART_ROW_BYTES + places x average: least at average = sqrt(size x PART_ROW_BYTES /
    places). That average is rounded to a power of two, never below base's nor above AVERAGE_CEILING,
    and the minimum and maximum keep their ratios to it. Small files keep `base` as it is."""
    best = math.sqrt(size * PART_ROW_BYTES / places)
    average = 1 << round(math.log2(best)) if best >= 1 else 1
    return scaled_to(base, max(base.average, min(average, AVERAGE_CEILING)))


def scaled_to(base: ChunkSizes, average: int) -> ChunkSizes:
    """`base` with `average` (a power of two, at least base's), its minimum and maximum in proportion."""
    scale = average // base.average
    return ChunkSizes(base.minimum * scale, average, base.maximum * scale)


def sizes_kept(previous: ChunkSizes | None, wanted: ChunkSizes) -> ChunkSizes:
    """`previous` while `wanted` is within a factor of two of it, else `wanted`. A file whose size hovers
    where sized_for's average steps would otherwise be cut the other way at every publish, and each
    such publish stores the whole file again (no chunk of one cut is a chunk of the other)."""
    if previous is not None and wanted.average // 2 <= previous.average <= wanted.average * 2:
        return previous
    return wanted


def chunk_ends(data: bytes | memoryview, sizes: ChunkSizes = FILE_CHUNKS) -> Iterator[int]:
    """The end offset of each chunk of `data`, cut as they are asked for: a mapped file is read only as
    far as the last chunk given, so its pages can be let go as it is cut."""
    size = len(data)
    if size <= sizes.maximum:
        if size:
            yield size
        return
    # A chunker per call: building one costs under a microsecond, and an instance is not thread-safe.
    chunker = FastCDC(sizes.average, min_size=sizes.minimum, max_size=sizes.maximum)
    for chunk in chunker.cut_buf(memoryview(data)):
        yield chunk.offset + chunk.length


def chunk_bounds(data: bytes | memoryview, sizes: ChunkSizes = FILE_CHUNKS) -> list[int]:
    """The end offset of each chunk of `data` (the last is len(data)); [] for no bytes. A file up to
    sizes.maximum is one chunk."""
    return list(chunk_ends(data, sizes))


def chunks_of(data: bytes, sizes: ChunkSizes = FILE_CHUNKS) -> list[memoryview]:
    """`data` cut into its chunks (views, no copies)."""
    view, ends = memoryview(data), chunk_bounds(data, sizes)
    return [view[a:b] for a, b in zip([0, *ends], ends, strict=False)]


def chunk_end(data: bytes | memoryview, start: int, sizes: ChunkSizes = FILE_CHUNKS) -> int:
    """Where the chunk that starts at `start` ends, when `start` is where chunk_bounds of a file larger
    than sizes.maximum puts a cut (or 0): a chunk's cut depends on its own bytes and on how many follow,
    up to the maximum, so one more byte than that is all it reads."""
    window = memoryview(data)[start : start + sizes.maximum + 1]
    chunker = FastCDC(sizes.average, min_size=sizes.minimum, max_size=sizes.maximum)
    return start + next(iter(chunker.cut_buf(window))).length
