"""Cutting a file again from its last version's cuts (issue 18 §3): whatever changed where, the chunks
and digests are exactly those of cutting and hashing the new file whole, and unchanged chunks are not
hashed again."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.chunk_reuse import Cuts, cut_again
from knowledge.retrieval.chunks import FILE_CHUNKS, INDEX_CHUNKS, ChunkSizes, chunk_bounds, chunk_end
from tests.retrieval.test_chunks import text


def sha(data: bytes | memoryview) -> str:
    return hashlib.sha256(data).hexdigest()


def whole(data: bytes, sizes: ChunkSizes) -> list[tuple[int, str]]:
    ends = chunk_bounds(data, sizes)
    return [(end, sha(data[start:end])) for start, end in zip([0, *ends], ends, strict=False)]


def again(new: bytes, old: bytes, sizes: ChunkSizes) -> tuple[list[tuple[int, str]], int]:
    """cut_again's chunks of `new` from `old`'s, and how many chunks it hashed."""
    hashed = []

    def digest(data: memoryview) -> str:
        hashed.append(len(data))
        return sha(data)

    found = cut_again(new, sizes, old=old, cuts=Cuts.of(whole(old, sizes)), digest=digest)
    return found, len(hashed)


def edited(data: bytes, edits: list[tuple[float, int, bytes]]) -> bytes:
    """`data` with each (place as a share of its length, bytes removed there, bytes put there) applied."""
    out = data
    for share, removed, put in edits:
        at = int(share * len(out))
        out = out[:at] + put + out[at + removed :]
    return out


def test_chunk_end_cuts_where_the_whole_file_is_cut() -> None:
    data = text(40 * INDEX_CHUNKS.maximum, seed=3)
    ends, at = [], 0
    while at < len(data):
        at = chunk_end(data, at, INDEX_CHUNKS)
        ends.append(at)
    assert ends == chunk_bounds(data, INDEX_CHUNKS)


def test_an_edit_in_the_middle_hashes_only_the_chunks_around_it() -> None:
    old = text(400_000, seed=5)
    new = edited(old, [(0.5, 10, b"an entry changed here")])
    found, hashed = again(new, old, FILE_CHUNKS)
    assert found == whole(new, FILE_CHUNKS)
    assert 1 <= hashed <= 4 < len(found)


def test_a_file_the_same_but_its_first_bytes_hashes_its_first_chunks_only() -> None:
    old = text(300_000, seed=8)
    new = b"v2" + old[2:]
    found, hashed = again(new, old, INDEX_CHUNKS)
    assert found == whole(new, INDEX_CHUNKS) and hashed <= 3


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 50),
    size=st.integers(INDEX_CHUNKS.maximum + 1, 200_000),
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 9000), st.binary(max_size=9000)), min_size=0, max_size=6),
    index=st.booleans(),
)
def test_cut_again_is_cutting_the_new_file_whole(
    seed: int, size: int, edits: list[tuple[float, int, bytes]], index: bool
) -> None:
    sizes = INDEX_CHUNKS if index else FILE_CHUNKS
    old = text(max(size, sizes.maximum + 1), seed=seed)
    new = edited(old, edits)
    if len(new) <= sizes.maximum:
        new += text(sizes.maximum + 1, seed=seed + 1)
    assert again(new, old, sizes)[0] == whole(new, sizes)


def test_repeated_chunks_and_a_moved_block_still_cut_as_a_whole_file() -> None:
    rng = random.Random(4)
    block = text(30_000, seed=9)
    old = block * 6 + text(50_000, seed=10)
    new = text(20_000, seed=11) + old[:-40_000] + block[: rng.randint(1, 30_000)]
    for sizes in (FILE_CHUNKS, INDEX_CHUNKS):
        assert again(new, old, sizes)[0] == whole(new, sizes)
