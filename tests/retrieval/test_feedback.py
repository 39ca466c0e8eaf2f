"""Pseudo-relevance feedback (feedback.py): what joins the query, and that it ranks only."""

from __future__ import annotations

import logging
import math
import mmap
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from knowledge.retrieval.container import pack_arrays, unpack_arrays
from knowledge.retrieval.feedback import (
    FEEDBACK_MAX_SHARE,
    FEEDBACK_WEIGHT,
    FORWARD_ARRAYS,
    ForwardIndex,
    expanded_plan,
)
from knowledge.retrieval.index import SearchIndex, SearchOptions
from tests.retrieval.helpers import make_document
from tests.retrieval.test_index_format import host_copy
from tests.retrieval.test_index_patching import collection, edited

UNGATED = SearchOptions(match_threshold=-math.inf)
DOCUMENTS = [
    make_document("EG-001", "Laminar boundary layer", body="Laminar flow over a flat plate; skin friction."),
    make_document("EG-002", "Boundary layer transition", body="Transition on a flat plate raises skin friction."),
    make_document("EG-003", "Heat transfer", body="Skin friction and heat transfer on a flat plate at Mach 6."),
    make_document("EG-004", "Wing flutter", body="Flutter of a swept wing at transonic speed."),
    # Others, so that the shared words are in under FEEDBACK_MAX_SHARE of the entries ("flow" is not).
    *(make_document(f"EG-1{n:02d}", f"Workshop note {n}", body=f"Lathe {n} and the flow of work.") for n in range(30)),
]


def test_the_forward_index_holds_each_entrys_terms_as_the_postings_do() -> None:
    index = SearchIndex.compile(DOCUMENTS)
    forward = index._forward
    for position in range(len(DOCUMENTS)):
        terms = forward.terms[forward.offsets[position] : forward.offsets[position + 1]]
        for term_id in terms.tolist():
            start, end = index._offsets[term_id], index._offsets[term_id + 1]
            assert position in index._docs[start:end]
    assert len(forward.terms) == len(index._docs)


def test_terms_shared_by_the_best_entries_join_and_never_count_as_coverage() -> None:
    index = SearchIndex.compile(DOCUMENTS)
    plan = index.plan("boundary layer")
    first = index.search("boundary layer", options=UNGATED)
    positions = np.array([hit.position for hit in first], dtype=np.int64)
    scores = np.array([hit.score for hit in first])
    expanded = expanded_plan(plan, positions, scores, index._forward)

    added = [index.vocabulary.term(int(t)) for t in expanded.term_ids[len(plan.term_ids) :]]
    assert "plate" in added and "friction" in added  # in both boundary-layer entries
    assert "flutter" not in added and "laminar" not in added  # in one entry only, or none of the best
    assert index._forward.entries[index.vocabulary.lookup("flow")] > FEEDBACK_MAX_SHARE * len(DOCUMENTS)
    assert "flow" not in added  # shared by the best entries, but too common to tell them apart
    assert max(expanded.weights[len(plan.term_ids) :]) == FEEDBACK_WEIGHT
    assert not expanded.informative_idf[len(plan.term_ids) :].any()
    assert expanded.coverage_total == plan.coverage_total


def test_feedback_reaches_an_entry_that_shares_the_neighbourhood_but_not_the_words() -> None:
    plain = SearchIndex.compile(DOCUMENTS)
    fed = plain.with_options(replace(plain.options, feedback=True))
    without = [DOCUMENTS[h.position].id for h in plain.search("boundary layer", options=UNGATED)]
    fed_options = replace(UNGATED, feedback=True)
    with_feedback = [DOCUMENTS[h.position].id for h in fed.search("boundary layer", options=fed_options)]

    assert "EG-003" not in without  # shares no word with the topic
    assert with_feedback[:2] == without[:2] and "EG-003" in with_feedback
    # Coverage and the match decision measure the topic's own words.
    assert fed.search("boundary layer").coverage == plain.search("boundary layer").coverage


def test_an_empty_forward_index_expands_nothing() -> None:
    index = SearchIndex.compile(DOCUMENTS[:1])
    plan = index.plan("boundary layer")
    forward = ForwardIndex.transposed(
        offsets=index._offsets, docs=index._docs, impacts=index._impacts["bm25f"], count=1
    )
    assert expanded_plan(plan, np.array([0]), np.array([1.0]), forward) is plan


def transposed_and_expected(
    postings: list[np.ndarray], count: int, rng: np.random.Generator
) -> tuple[ForwardIndex, np.ndarray, np.ndarray, np.ndarray]:
    """The forward index of random `postings`, and what a stable sort by entry gives: terms, impacts, docs."""
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in postings])]).astype(np.int64)
    docs = np.concatenate(postings).astype(np.int32)
    impacts = rng.random(len(docs)).astype(np.float32)
    forward = ForwardIndex.transposed(offsets=offsets, docs=docs, impacts=impacts, count=count)
    order = np.argsort(docs, kind="stable")
    terms = np.repeat(np.arange(len(postings)), np.diff(offsets))
    return forward, terms[order], impacts[order], docs[order]


def test_the_transposition_orders_postings_by_entry_as_a_stable_sort_would() -> None:
    rng = np.random.default_rng(7)
    count = 70_000
    postings = [np.sort(rng.choice(count, int(rng.integers(1, 9_000)), replace=False)) for _ in range(50)]
    forward, terms, impacts, docs = transposed_and_expected(postings, count, rng)

    assert (forward.terms == terms).all() and (forward.impacts == impacts).all()
    assert (forward.offsets == np.searchsorted(docs, np.arange(count + 1))).all()


def test_the_transposition_keeps_the_host_files_types_through_terms_and_entries_without_postings() -> None:
    rng = np.random.default_rng(11)
    count = 5_000
    postings = [np.sort(rng.choice(count // 2, int(rng.integers(0, 2_500)), replace=False)) for _ in range(40)]
    postings[3] = np.zeros(0, dtype=np.int64)
    forward, terms, impacts, _ = transposed_and_expected(postings, count, rng)

    assert (forward.terms == terms).all() and (forward.impacts == impacts).all()
    assert (forward.offsets[count // 2 :] == len(terms)).all()  # the entries no term holds
    assert (forward.offsets.dtype, forward.terms.dtype, forward.impacts.dtype) == (np.int64, np.int32, np.float32)


def test_the_transposition_holds_no_64_bit_copy_of_the_postings_beside_its_result() -> None:
    """Given int64 offsets, scipy made every index array 64-bit: a copy of the entry ids and a 64-bit
    result, each narrowed again (20 bytes per posting held at once, the peak of a build at 100,000
    entries). The result itself is 8 bytes per posting (a 32-bit term and impact each)."""
    rng = np.random.default_rng(5)
    count = 20_000
    postings = [np.sort(rng.choice(count, int(rng.integers(1, 8_000)), replace=False)) for _ in range(60)]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in postings])]).astype(np.int64)
    docs = np.concatenate(postings).astype(np.int32)
    impacts = rng.random(len(docs)).astype(np.float32)
    tracemalloc.start()
    try:
        forward = ForwardIndex.transposed(offsets=offsets, docs=docs, impacts=impacts, count=count)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert peak < 10 * len(docs) + 16 * (count + len(offsets))
    order = np.argsort(docs, kind="stable")
    assert (forward.impacts == impacts[order]).all()
    assert (forward.offsets.dtype, forward.terms.dtype) == (np.int64, np.int32)


def fed_answers(index: SearchIndex) -> list[list[tuple[int, float]]]:
    fed_options = replace(UNGATED, feedback=True)
    topics = ["boundary layer", "skin friction", "flutter wing", "lathe flow"]
    return [[(hit.position, hit.score) for hit in index.search(topic, options=fed_options)] for topic in topics]


def mapped(path: Path) -> SearchIndex:
    with open(path, "rb") as file:
        return SearchIndex.from_bytes(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ))


def test_a_hosts_mapped_copy_holds_the_forward_index_and_a_worker_computes_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = SearchIndex.compile(DOCUMENTS)
    fed = plain.with_options(replace(plain.options, feedback=True))
    path = tmp_path / "index"
    served = host_copy(fed, path)
    _, arrays = unpack_arrays(served)
    assert all(name in arrays for name in FORWARD_ARRAYS)
    assert not any(name in unpack_arrays(fed.to_bytes())[1] for name in FORWARD_ARRAYS)  # never stored

    expected, answered = fed._forward.arrays(), fed_answers(fed)

    def transposed(**_: object) -> ForwardIndex:
        raise AssertionError("a worker transposed the postings")

    monkeypatch.setattr(ForwardIndex, "transposed", transposed)
    index = mapped(path).prepared()
    for name, array in index._forward.arrays().items():
        assert not array.flags.owndata and not array.flags.writeable, name  # the file's pages
        assert (array == expected[name]).all() and array.dtype == expected[name].dtype
    assert fed_answers(index) == answered
    assert index.to_bytes() == fed.to_bytes()
    SearchIndex.serve_file(path)  # already served: left as it is
    assert path.read_bytes() == served


def test_a_host_copy_made_before_the_forward_index_still_answers_the_same(tmp_path: Path) -> None:
    plain = SearchIndex.compile(DOCUMENTS)
    fed = plain.with_options(replace(plain.options, feedback=True))
    meta, arrays = unpack_arrays(b"".join(fed.served_pieces()))
    path = tmp_path / "index"
    path.write_bytes(pack_arrays(meta, {name: a for name, a in arrays.items() if name not in FORWARD_ARRAYS}))
    assert fed_answers(mapped(path).prepared()) == fed_answers(fed)  # transposed as it loads, as before
    SearchIndex.serve_file(path)
    assert path.read_bytes() == b"".join(fed.served_pieces())


def test_a_compiled_index_gives_its_host_the_forward_index_its_searches_transposed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A calibrating build has transposed the postings already (its searches rank with feedback): the copy
    it writes for its host reuses that forward index, and is the copy the stored bytes give."""
    plain = SearchIndex.compile(collection(), patchable=True)
    with caplog.at_level(logging.INFO, logger="knowledge.retrieval.patching"):
        patched = SearchIndex.compile(
            edited(collection(), 9, "A zeppelin note."), previous=plain, reference=plain.reference, patchable=True
        )
    assert "Index patched" in caplog.text  # the patch's impacts, not only a full compile's
    fed = patched.with_options(replace(patched.options, feedback=True)).prepared()  # transposed here
    assert "_forward" in fed.__dict__

    def transposed(**_: object) -> ForwardIndex:
        raise AssertionError("the postings were transposed again")

    monkeypatch.setattr(ForwardIndex, "transposed", transposed)
    served = b"".join(fed.served_pieces())
    monkeypatch.undo()
    path = tmp_path / "index"
    assert host_copy(fed, path) == served  # host_copy: serve_file of the stored bytes, the other way round
