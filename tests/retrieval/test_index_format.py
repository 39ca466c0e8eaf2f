"""Index formats 2 and 3 (knowledge.retrieval.index_format): lengths where format 1 stored offsets, no idf,
and (3) no impacts; they search with the arrays format 1 stored, and format 1 and 2 indexes still load
and answer the same."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

from knowledge.retrieval import index_format
from knowledge.retrieval.container import pack_arrays, unpack_arrays
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.index_format import (
    IDF,
    IMPACTS,
    LENGTHS,
    MAX_IMPACTS,
    MAX_SATURATION,
    ORDER,
    ROW_BYTES,
    ROW_COLUMNS,
    ROWS,
    searched_arrays,
    stored_arrays,
)
from tests.retrieval.test_index_patching import collection, edited

TOPICS = ["token budget", "w17 w204 agent", "预算 检索", "release index w9", "w1", "", "zeppelin"]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex.compile(collection(), patchable=True)


def as_format_1(index: SearchIndex) -> bytes:
    """The bytes Evergreen wrote before format 2: every array it searches with, absolute offsets included."""
    meta, arrays = unpack_arrays(index.to_bytes())
    searched = searched_arrays(meta, arrays)
    derived = {*LENGTHS.values(), "term_order_hashes", MAX_SATURATION}
    kept = {name: array for name, array in searched.items() if name not in derived}
    return pack_arrays({**meta, "format": 1}, kept)


def as_format_2(index: SearchIndex) -> bytes:
    """The bytes Evergreen wrote before format 3: impacts and each term's best stored."""
    meta, arrays = unpack_arrays(index.to_bytes())
    searched = searched_arrays(meta, arrays)
    return pack_arrays({**meta, "format": 2}, stored_arrays({n: a for n, a in searched.items() if n != MAX_SATURATION}))


def answers(index: SearchIndex) -> list[tuple[str, bool, float | None, list[tuple[int, float, str | None]]]]:
    found = []
    for topic in TOPICS:
        ranking = index.search(topic)
        found.append((ranking.mode, ranking.matched, ranking.gate_score, list(ranking.ranked())[:20]))
    return found


def test_format_4_stores_lengths_no_impacts_rows_of_postings_and_searches_with_the_arrays_format_1_stored(
    index: SearchIndex,
) -> None:
    meta, stored = unpack_arrays(index.to_bytes())
    assert meta["format"] == 4
    assert not set(stored) & {*LENGTHS, ORDER, IDF, IMPACTS, MAX_IMPACTS, *(name for name, _ in ROW_COLUMNS)}
    assert stored[ROWS].shape == (len(index._arrays["post_docs"]), 13)
    _, old = unpack_arrays(as_format_1(index))
    loaded = SearchIndex.from_bytes(index.to_bytes())
    for name, array in old.items():
        assert loaded._arrays[name].dtype == array.dtype and np.array_equal(loaded._arrays[name], array), name


def test_a_format_1_index_still_loads_answers_the_same_and_is_patched_into_format_2(index: SearchIndex) -> None:
    old = SearchIndex.from_bytes(as_format_1(index))
    assert answers(old) == answers(index)
    assert old.to_bytes() == as_format_1(index)  # it keeps its format
    documents = edited(collection(), 9, "A zeppelin note.")
    patched = SearchIndex.compile(documents, previous=old, reference=old.reference, patchable=True)
    assert patched.to_bytes() == SearchIndex.compile(documents, reference=old.reference, patchable=True).to_bytes()


def test_the_string_order_is_stored_as_ids_when_two_terms_share_a_hash() -> None:
    order = np.array([2, 0, 3, 1], dtype=np.int32)
    shared = stored_arrays({"term_hashes": np.array([3, 5, 5, 9], dtype=np.uint64), ORDER: order})
    assert np.array_equal(shared[ORDER], order) and "term_order_hashes" not in shared
    hashes = np.array([3, 5, 7, 9], dtype=np.uint64)
    unique = stored_arrays({"term_hashes": hashes, ORDER: order})
    assert ORDER not in unique and np.array_equal(unique["term_order_hashes"], hashes[order])


def as_format_3(index: SearchIndex) -> bytes:
    """The bytes Evergreen wrote before format 4: the posting columns stored as they are searched."""
    meta, arrays = unpack_arrays(index.to_bytes())
    meta = {**meta, "format": 3}
    return pack_arrays(meta, stored_arrays(searched_arrays(meta, arrays), meta))


def mapped_from_file(index: SearchIndex, path: Path) -> SearchIndex:
    """`index` stored at `path` and loaded from the file mapped, as a build reads its spooled index."""
    path.write_bytes(index.to_bytes())
    with open(path, "rb") as file:
        return SearchIndex.from_bytes(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ))


def test_format_4_derives_the_impacts_and_columns_compile_made_bit_for_bit(index: SearchIndex) -> None:
    loaded = SearchIndex.from_bytes(index.to_bytes())
    for name in (IMPACTS, MAX_IMPACTS, *(name for name, _ in ROW_COLUMNS)):
        compiled, derived = index._arrays[name], loaded._arrays[name]
        assert derived.dtype == compiled.dtype and derived.flags.c_contiguous, name
        assert derived.tobytes() == np.ascontiguousarray(compiled).tobytes(), name
    assert answers(loaded) == answers(index)


def test_a_mapped_format_4_index_takes_its_rows_apart_a_block_at_a_time_into_the_same_columns(
    index: SearchIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build reads its spooled index mapped (RenderedArtifact.mapped), the pages let go after each block."""
    monkeypatch.setattr(index_format, "BLOCK_ROWS", 7)  # many blocks, the last one short
    mapped = mapped_from_file(index, tmp_path / "index.bin")
    for name in (IMPACTS, MAX_IMPACTS, *(name for name, _ in ROW_COLUMNS)):
        compiled, derived = index._arrays[name], mapped._arrays[name]
        assert derived.dtype == compiled.dtype and derived.flags.c_contiguous, name
        assert derived.tobytes() == np.ascontiguousarray(compiled).tobytes(), name
    assert answers(mapped) == answers(index)
    assert b"".join(bytes(piece) for piece in mapped.to_pieces()) == index.to_bytes()


def test_a_format_4_index_is_written_a_block_of_rows_at_a_time_as_the_bytes_it_stores(
    index: SearchIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows are made as they are written, never whole beside the columns (103 MB at 100,000 entries)."""
    monkeypatch.setattr(index_format, "BLOCK_ROWS", 7)  # many blocks, the last one short
    rows = len(index._arrays["post_docs"])
    pieces = [bytes(piece) for piece in index.to_pieces()]

    assert b"".join(pieces) == index.to_bytes()
    assert rows > 7 and max(len(piece) for piece in pieces) < rows * ROW_BYTES


def test_impacts_the_saturations_do_not_give_back_stay_stored(index: SearchIndex) -> None:
    arrays = dict(index._arrays)
    arrays[IMPACTS] = arrays[IMPACTS].copy()
    arrays[IMPACTS][0] = np.nextafter(arrays[IMPACTS][0], np.float32(9))
    stored = stored_arrays(arrays, index._meta)
    assert IMPACTS in stored and MAX_IMPACTS in stored and MAX_SATURATION not in stored


def test_a_format_3_index_still_loads_answers_the_same_and_keeps_its_format(index: SearchIndex, tmp_path: Path) -> None:
    stored = as_format_3(index)
    meta, arrays = unpack_arrays(stored)
    assert meta["format"] == 3 and IMPACTS not in arrays and ROWS not in arrays and "post_docs" in arrays
    old = SearchIndex.from_bytes(stored)
    assert answers(old) == answers(index)
    assert old.to_bytes() == stored
    path = tmp_path / "index"
    path.write_bytes(stored)
    SearchIndex.serve_file(path)
    assert IMPACTS in unpack_arrays(path.read_bytes())[1]
    assert answers(SearchIndex.from_bytes(path.read_bytes())) == answers(index)


def test_a_format_2_index_still_loads_answers_the_same_and_keeps_its_format(index: SearchIndex) -> None:
    old = SearchIndex.from_bytes(as_format_2(index))
    meta, stored = unpack_arrays(as_format_2(index))
    assert meta["format"] == 2 and IMPACTS in stored and MAX_SATURATION not in stored
    assert answers(old) == answers(index)
    assert old.to_bytes() == as_format_2(index)
    assert b"".join(old.served_pieces()) == as_format_2(index)  # a host maps it as stored, as before
    documents = edited(collection(), 9, "A zeppelin note.")
    patched = SearchIndex.compile(documents, previous=old, reference=old.reference, patchable=True)
    assert patched.to_bytes() == SearchIndex.compile(documents, reference=old.reference, patchable=True).to_bytes()


def host_copy(index: SearchIndex, path: Path) -> bytes:
    """The copy of `index` a host's workers map, made from its stored bytes at `path` (serve_file)."""
    path.write_bytes(index.to_bytes())
    SearchIndex.serve_file(path)
    served = path.read_bytes()
    assert served == b"".join(index.served_pieces())
    return served


def test_the_copy_a_host_maps_holds_the_impacts_and_stores_the_same_bytes(index: SearchIndex, tmp_path: Path) -> None:
    path = tmp_path / "index"
    served = host_copy(index, path)
    _, arrays = unpack_arrays(served)
    assert IMPACTS in arrays and MAX_IMPACTS in arrays and ROWS not in arrays
    meta, _ = unpack_arrays(served)
    searched = searched_arrays(meta, arrays)
    for name in (IMPACTS, MAX_IMPACTS, *(name for name, _ in ROW_COLUMNS)):
        assert searched[name] is arrays[name], name  # the file's own array: nothing derived as it loads
    mapped = SearchIndex.from_bytes(served)
    assert answers(mapped) == answers(index)
    assert mapped.to_bytes() == index.to_bytes()
    SearchIndex.serve_file(path)  # already served: left as it is
    assert path.read_bytes() == served


def test_a_host_copy_made_from_rows_a_block_at_a_time_is_the_same_bytes(
    index: SearchIndex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve_file takes each posting column out of the mapped rows a block at a time, the pages let go after each."""
    monkeypatch.setattr(index_format, "BLOCK_ROWS", 7)  # many blocks, the last one short
    path = tmp_path / "index"
    path.write_bytes(index.to_bytes())
    SearchIndex.serve_file(path)
    assert path.read_bytes() == b"".join(index.served_pieces())


def test_a_build_writes_the_host_copy_from_its_stored_bytes_as_serve_file_makes_it(
    index: SearchIndex, tmp_path: Path
) -> None:
    """served_write makes the host's copy from a stored index (bytes, or the build's mapped spool) in one
    pass; given a host's copy already, it writes those bytes unchanged."""
    stored = tmp_path / "stored"
    stored.write_bytes(index.to_bytes())
    with open(stored, "rb") as file:
        spooled = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    SearchIndex.served_write(spooled, tmp_path / "from-map")
    SearchIndex.served_write(index.to_bytes(), tmp_path / "from-bytes")
    served = host_copy(index, tmp_path / "in-place")
    assert (tmp_path / "from-map").read_bytes() == (tmp_path / "from-bytes").read_bytes() == served
    SearchIndex.served_write(served, tmp_path / "again")
    assert (tmp_path / "again").read_bytes() == served


def test_a_mapped_index_lets_go_of_its_pages_and_answers_the_same(index: SearchIndex, tmp_path: Path) -> None:
    """A build drops the pages of the index it patched before writing the new one (render_release)."""
    mapped = mapped_from_file(index, tmp_path / "index")
    before = answers(mapped)
    mapped.pages_let_go()
    assert answers(mapped) == before == answers(index)
    index.pages_let_go()  # not mapped: nothing to let go
    assert answers(index) == before
