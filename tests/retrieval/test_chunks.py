"""Content-defined chunks (issue 18 §3-4): the chunks make up the file, sizes stay in bounds, an edit changes
only the chunks around it, and the same bytes cut where they always did."""

from __future__ import annotations

import hashlib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.chunks import (
    AVERAGE_CEILING,
    CHUNK_MAX,
    CHUNK_MIN,
    FILE_CHUNKS,
    INDEX_CHUNKS,
    PART_ROW_BYTES,
    chunk_bounds,
    chunks_of,
    scaled_to,
    sized_for,
    sizes_kept,
)

LETTERS = "abcdefghijklmnopqrstuvwxyz预算条目版本"


def text(size: int, seed: int = 7) -> bytes:
    """Prose-like bytes: words of a few thousand (as entries' text is, unlike a few words over and over)."""
    rng = random.Random(seed)
    words = ["".join(rng.choice(LETTERS) for _ in range(rng.randint(2, 9))) for _ in range(3000)]
    out = bytearray()
    while len(out) < size:
        out += (rng.choice(words) + " ").encode()
    return bytes(out[:size])


def digests(data: bytes) -> list[str]:
    return [hashlib.sha256(chunk).hexdigest() for chunk in chunks_of(data)]


def test_a_small_file_is_one_chunk_and_no_bytes_no_chunk() -> None:
    assert chunk_bounds(b"") == [] and chunks_of(b"") == []
    assert chunk_bounds(text(CHUNK_MAX)) == [CHUNK_MAX]


def test_the_chunks_of_a_large_file_make_it_up_within_their_bounds() -> None:
    data = text(9 * CHUNK_MAX)
    chunks = chunks_of(data)
    assert b"".join(chunks) == data and len(chunks) > 9
    assert all(CHUNK_MIN <= len(chunk) <= CHUNK_MAX for chunk in chunks[:-1])
    assert chunk_bounds(data) == chunk_bounds(bytes(data))  # deterministic


def test_an_edit_in_the_middle_changes_only_the_chunks_around_it() -> None:
    data = text(8 * CHUNK_MAX)
    middle = len(data) // 2
    for edited in (
        data[:middle] + b"a changed entry body " + data[middle + 21 :],  # same length
        data[:middle] + b"an inserted sentence about budgets. " + data[middle:],  # longer
        data[:middle] + data[middle + 500 :],  # shorter
    ):
        before, after = digests(data), digests(edited)
        assert len(set(after) - set(before)) <= 2 < len(before)


@settings(max_examples=30, deadline=None)
@given(st.binary(min_size=0, max_size=3 * CHUNK_MAX // 2), st.integers(min_value=0, max_value=3))
def test_any_bytes_are_cut_into_chunks_that_make_them_up(head: bytes, repeat: int) -> None:
    data = head + text(repeat * CHUNK_MAX // 2 + 1, seed=repeat)
    ends = chunk_bounds(data)
    assert ends == sorted(ends) and ends[-1] == len(data)
    assert b"".join(chunks_of(data)) == data
    assert all(0 < b - a <= CHUNK_MAX for a, b in zip([0, *ends], ends, strict=False))


def test_an_index_is_cut_finer_and_resynchronises_in_data_of_few_distinct_words() -> None:
    """Passage-block masks and seed weights repeat a few values: eight-byte windows hash alike there, so
    without the wider window chunks would be cut by size and an insertion would move every later cut."""
    rng = random.Random(3)
    data = b"".join(rng.choice([b"\xff\xff\xff\xff", b"\x01\x00\x00\x00", b"\x04\x00\x00\x00"]) for _ in range(600_000))
    inserted = data[:1_000_000] + b"\x02\x00\x00\x00" + data[1_000_000:]
    before = {bytes(chunk) for chunk in chunks_of(data, INDEX_CHUNKS)}
    after = chunks_of(inserted, INDEX_CHUNKS)
    assert all(len(chunk) <= INDEX_CHUNKS.maximum for chunk in after) and b"".join(after) == inserted
    assert sum(len(chunk) for chunk in after if bytes(chunk) not in before) <= 2 * INDEX_CHUNKS.maximum


def few_words(count: int) -> bytes:
    rng = random.Random(3)
    return b"".join(rng.choice([b"\xff\xff\xff\xff", b"\x01\x00\x00\x00", b"\x04\x00\x00\x00"]) for _ in range(count))


def test_the_same_bytes_cut_where_they_always_did() -> None:
    """Cut points are pinned: a new version of the chunking library (pyfastcdc) that cut otherwise would
    store every file of the next publish anew. Not wrong (chunks are addressed by content), but costly."""
    assert chunk_bounds(text(9 * CHUNK_MAX))[:6] == [8155, 14237, 28017, 33520, 40353, 45958]
    assert chunk_bounds(few_words(100_000), INDEX_CHUNKS)[:6] == [3366, 7721, 10684, 11782, 13332, 15200]


def test_chunk_sizes_stay_near_their_average() -> None:
    """The sizes are normalised around average + minimum (FastCDC skips the hash in a chunk's first
    `minimum` bytes), and few chunks are cut at the maximum."""
    for sizes, data in ((FILE_CHUNKS, text(64 * CHUNK_MAX)), (INDEX_CHUNKS, random.Random(5).randbytes(4_000_000))):
        ends = chunk_bounds(data, sizes)
        lengths = [b - a for a, b in zip([0, *ends], ends, strict=False)][:-1]
        assert all(sizes.minimum <= n <= sizes.maximum for n in lengths)
        mean = sum(lengths) / len(lengths)
        assert sizes.average <= mean <= sizes.average + 2 * sizes.minimum
        assert sum(n == sizes.maximum for n in lengths) <= len(lengths) // 50


def test_the_chunker_is_the_compiled_one() -> None:
    """pyfastcdc falls back to pure Python (with a warning) where its extension does not load: the same
    cuts, a hundred times slower, which a build at 100,000 entries would feel."""
    from knowledge.retrieval import chunks

    assert chunks.FastCDC.__module__.startswith("pyfastcdc.cy")


def test_large_files_are_cut_at_the_power_of_two_average_that_stores_least() -> None:
    """Issue 18 §4: each chunk costs every release a part row and each changed chunk its bytes, so the
    average grows with the square root of the file (10,000 entries: a 13 MB index at 4 KiB; 100,000: a
    114 MB context.json at the 64 KiB ceiling); small files keep the sizes they always had."""

    def stored(size: int, average: int, places: int) -> float:
        return size / average * PART_ROW_BYTES + places * average

    assert sized_for(INDEX_CHUNKS, 300_000, places=128) == INDEX_CHUNKS
    assert sized_for(FILE_CHUNKS, 500_000, places=4) == FILE_CHUNKS
    assert sized_for(INDEX_CHUNKS, 13_000_000, places=128) == scaled_to(INDEX_CHUNKS, 4096)
    assert sized_for(FILE_CHUNKS, 114_000_000, places=4) == scaled_to(FILE_CHUNKS, AVERAGE_CEILING)
    for base, places in ((INDEX_CHUNKS, 128), (FILE_CHUNKS, 4)):
        for size in (2_000_000, 13_000_000, 40_000_000, 120_000_000):
            sizes = sized_for(base, size, places=places)
            assert sizes == scaled_to(base, sizes.average) and base.average <= sizes.average <= AVERAGE_CEILING
            for other in (sizes.average // 2, sizes.average * 2):
                if base.average <= other <= AVERAGE_CEILING:
                    assert stored(size, sizes.average, places) <= stored(size, other, places)


def test_a_file_keeps_the_sizes_it_was_cut_with_while_they_stay_within_a_step_of_the_best() -> None:
    """A file whose size hovers where the best average steps is not cut the other way at every publish
    (each time storing all of it again): it changes sizes only two steps away from them."""
    two, four, eight, sixteen = (scaled_to(INDEX_CHUNKS, 1024 * n) for n in (2, 4, 8, 16))
    assert sizes_kept(None, eight) == eight
    assert (
        sizes_kept(four, eight) == four and sizes_kept(sixteen, eight) == sixteen and sizes_kept(eight, eight) == eight
    )
    assert sizes_kept(two, eight) == eight and sizes_kept(eight, two) == two
