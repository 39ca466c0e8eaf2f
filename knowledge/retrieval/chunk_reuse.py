"""Cutting a file's next version into chunks from the cuts of the last one, hashing only what changed.

A one-entry publish changes a few places of each large file (context.json's first group and the
entry's, about a hundred places of the index), yet cutting every file and hashing every chunk was
about a sixth of a one-entry build at 100,000 entries (issue 18 §3). FastCDC cuts a chunk from its
start, reading its own bytes and how many follow (up to the maximum: chunks.chunk_end), so where the
new file holds, at a cut, the bytes of the old file at one of its cuts, the old chunk is the new one:
its bytes are compared (a copy and a memcmp, far cheaper than a SHA-256) and its digest taken over.
Where they differ, chunks are cut and hashed one at a time until one is an old chunk again (by
digest): the cuts are back in step from its end. The result is exactly chunk_bounds' cuts with each
chunk's own digest (tests/retrieval/test_chunk_reuse.py).
"""

from __future__ import annotations

import mmap
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knowledge.retrieval.chunks import ChunkSizes, chunk_end

DIGEST_HEX = 64  # a SHA-256 in hex
RELEASE_BYTES = 16 * 1024 * 1024  # the old file's mapped pages are let go after about this many bytes


@dataclass(frozen=True, slots=True)
class Cuts:
    """A file's chunks: each one's end and its SHA-256 in hex (DIGEST_HEX ASCII bytes each, joined)."""

    ends: Sequence[int]
    digests: bytes

    def digest(self, number: int) -> str:
        return self.digests[number * DIGEST_HEX : (number + 1) * DIGEST_HEX].decode()

    @classmethod
    def of(cls, found: Sequence[tuple[int, str]]) -> Cuts:
        return cls([end for end, _ in found], "".join(digest for _, digest in found).encode())


def cut_again(
    data: bytes | mmap.mmap,
    sizes: ChunkSizes,
    *,
    old: bytes | mmap.mmap,
    cuts: Cuts,
    digest: Callable[[memoryview], str],
) -> list[tuple[int, str]]:
    """(end, digest) of each chunk of `data` as chunk_bounds cuts it and `digest` hashes it, reusing the
    chunks of `old` (cut as `cuts` says). Both files are larger than sizes.maximum; the pages of either,
    mapped, are let go as they are compared."""
    view, size, old_size, count = memoryview(data), len(data), len(old), len(cuts.ends)
    starts = [0, *cuts.ends[:-1]]
    by_digest: dict[str, int] | None = None
    found: list[tuple[int, str]] = []
    at, number, released = 0, 0, 0  # number: the old chunk that starts where `at` is in step with, or -1
    while at < size:
        if 0 <= number < count:
            start, stop = starts[number], cuts.ends[number]
            end = at + stop - start
            # The cut depends on how many bytes follow, up to the maximum: as many, or at least that many.
            follow = size - at == old_size - start or (size - at > sizes.maximum and old_size - start > sizes.maximum)
            if follow and end <= size and data[at:end] == old[start:stop]:
                found.append((end, cuts.digest(number)))
                at, number = end, number + 1
                if stop - released > RELEASE_BYTES:
                    for mapped in (old, data):
                        if isinstance(mapped, mmap.mmap):
                            mapped.madvise(mmap.MADV_DONTNEED)
                    released = stop
                continue
        end = chunk_end(view, at, sizes)
        found.append((end, digest(view[at:end])))
        at = end
        if by_digest is None:  # the first occurrence of each digest (reversed: earlier ones overwrite later)
            by_digest = {cuts.digest(n): n for n in range(count - 1, -1, -1)}
        number = by_digest.get(found[-1][1], -2) + 1
    return found
