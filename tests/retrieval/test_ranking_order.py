"""Lazy ranking order and the safety of the index container."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from knowledge.retrieval.container import ContainerError, pack_arrays, unpack_arrays
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.ranking import iter_ranked
from tests.retrieval.helpers import make_document


@given(st.lists(st.integers(min_value=0, max_value=5), max_size=300))
def test_lazy_order_equals_a_full_sort_by_score_then_position(raw: list[int]) -> None:
    scores = np.array(raw, dtype=np.float64)
    positions = np.arange(len(raw))[::-1].copy()

    lazy = list(iter_ranked(positions, scores))

    assert lazy == sorted(range(len(raw)), key=lambda i: (-scores[i], positions[i]))


WORDS = st.sampled_from(["wing", "flow", "heat", "预算", "规则", "token", "mach", "layer"])


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(WORDS, min_size=1, max_size=6), min_size=1, max_size=12), st.lists(WORDS, max_size=3))
def test_search_is_deterministic_and_survives_serialization(bodies: list[list[str]], topic: list[str]) -> None:
    documents = [make_document(f"EG-{n:03d}", body=" ".join(b)) for n, b in enumerate(bodies, start=1)]
    index = SearchIndex.compile(documents)
    loaded = SearchIndex.from_bytes(index.to_bytes())
    query = " ".join(topic)

    first = [(h.position, h.score) for h in index.search(query)]

    assert first == [(h.position, h.score) for h in loaded.search(query)]
    assert index.to_bytes() == SearchIndex.compile(documents).to_bytes()
    assert len({p for p, _ in first}) == len(first)


def test_container_refuses_foreign_or_truncated_bytes() -> None:
    data = pack_arrays({"k": 1}, {"a": np.arange(4, dtype=np.int32)})

    assert unpack_arrays(data)[1]["a"].tolist() == [0, 1, 2, 3]
    with pytest.raises(ContainerError):
        unpack_arrays(b"\x80\x04pickle")
    with pytest.raises(ContainerError):
        unpack_arrays(data[:-8])


def test_container_refuses_object_arrays() -> None:
    with pytest.raises(ContainerError):
        pack_arrays({}, {"a": np.array([object()], dtype=object)})
