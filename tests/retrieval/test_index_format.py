"""Index format 2 (knowledge.retrieval.index_format): lengths where format 1 stored offsets, no idf; it
searches with the arrays format 1 stored, and a format 1 index still loads and answers the same."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.retrieval.container import pack_arrays, unpack_arrays
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.index_format import IDF, LENGTHS, ORDER, searched_arrays, stored_arrays
from tests.retrieval.test_index_patching import collection, edited

TOPICS = ["token budget", "w17 w204 agent", "预算 检索", "release index w9", "w1", "", "zeppelin"]


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex.compile(collection(), patchable=True)


def as_format_1(index: SearchIndex) -> bytes:
    """The bytes Evergreen wrote before format 2: every array it searches with, absolute offsets included."""
    meta, arrays = unpack_arrays(index.to_bytes())
    searched = searched_arrays(meta, arrays)
    kept = {name: array for name, array in searched.items() if name not in {*LENGTHS.values(), "term_order_hashes"}}
    return pack_arrays({**meta, "format": 1}, kept)


def answers(index: SearchIndex) -> list[tuple[str, bool, float | None, list[tuple[int, float, str | None]]]]:
    found = []
    for topic in TOPICS:
        ranking = index.search(topic)
        found.append((ranking.mode, ranking.matched, ranking.gate_score, list(ranking.ranked())[:20]))
    return found


def test_format_2_stores_lengths_and_searches_with_the_arrays_format_1_stored(index: SearchIndex) -> None:
    meta, stored = unpack_arrays(index.to_bytes())
    assert meta["format"] == 2
    assert not set(stored) & {*LENGTHS, ORDER, IDF}
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
