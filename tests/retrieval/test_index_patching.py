"""An index patched from the previous one (issue 18 §3-4) is byte for byte the index a full compile of the
same documents against the same reference statistics makes; the posting lists of terms a change does
not touch keep their bytes; and a collection that drifted from its reference statistics is compiled in
full against statistics measured again."""

from __future__ import annotations

import logging
import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from knowledge.retrieval import patching
from knowledge.retrieval.chunks import INDEX_CHUNKS, chunks_of
from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex, SearchOptions
from knowledge.retrieval.patching import _any_known
from knowledge.retrieval.postings import REFERENCE_DRIFT, analyze_fields
from knowledge.retrieval.synonyms import SynonymSet
from tests.retrieval.helpers import make_document

WORDS = [f"w{n}" for n in range(3000)] + ["token", "budget", "agent", "release", "index", "预算", "检索"]
SIZE = 400


def _text(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count)) + "."


def collection(size: int = SIZE, seed: int = 5) -> list[Document]:
    rng = random.Random(seed)
    return [
        make_document(
            f"DOC-{number:04d}",
            _text(rng, 4),
            category=("fact", "rule")[number % 2],
            summary=_text(rng, 10),
            body=" ".join(_text(rng, 12) for _ in range(rng.randrange(1, 6))),
            tags=[rng.choice(WORDS)],
            confidence=round(0.8 + 0.2 * rng.random(), 2),
        )
        for number in range(size)
    ]


@pytest.fixture(scope="module")
def documents() -> list[Document]:
    return collection()


@pytest.fixture(scope="module")
def previous(documents: list[Document]) -> SearchIndex:
    return SearchIndex.from_bytes(SearchIndex.compile(documents, patchable=True).to_bytes())


def patched_and_full(previous: SearchIndex, documents: list[Document]) -> tuple[bytes, bytes]:
    patched = SearchIndex.compile(documents, previous=previous, reference=previous.reference, patchable=True)
    full = SearchIndex.compile(documents, reference=previous.reference, patchable=True)
    return patched.to_bytes(), full.to_bytes()


def edited(documents: list[Document], position: int, body: str) -> list[Document]:
    changed = list(documents)
    changed[position] = replace(changed[position], body=body)
    return changed


def test_every_kind_of_change_patches_to_a_full_compiles_bytes(
    documents: list[Document], previous: SearchIndex, caplog: pytest.LogCaptureFixture
) -> None:
    added = make_document("DOC-9999", "A new entry", body="zeppelin w1 w2 token budget.", tags=["zeppelin"])
    between = make_document("DOC-0100A", "Inserted between two", body="xylophone w7 预算.")
    changes = {
        "edit": edited(documents, 7, documents[7].body + " zeppelin quux."),
        "addition": [*documents, added],
        "addition between two": sorted([*documents, between], key=lambda d: d.id),
        "retirement": documents[:50] + documents[51:],
        "recategorised": [replace(d, category="workflow") if i == 3 else d for i, d in enumerate(documents)],
        "confidence": [replace(d, confidence=0.5) if i == 9 else d for i, d in enumerate(documents)],
        "links": [replace(d, links=("DOC-0001",)) if i == 2 else d for i, d in enumerate(documents)],
        "a term's last holder retired": documents[1:],
        "nothing": documents,
    }
    for name, changed in changes.items():
        with caplog.at_level(logging.INFO, logger="knowledge.retrieval.patching"):
            caplog.clear()
            patched, full = patched_and_full(previous, changed)
        assert "Index patched" in caplog.text, name
        assert patched == full, name


def test_synonyms_and_options_change_only_the_meta(documents: list[Document], previous: SearchIndex) -> None:
    synonyms = [SynonymSet(phrases=("budget", "预算"))]
    patched = SearchIndex.compile(documents, previous=previous, reference=previous.reference, synonyms=synonyms)
    full = SearchIndex.compile(documents, reference=previous.reference, synonyms=synonyms)
    assert patched.to_bytes() == full.to_bytes() != previous.to_bytes()


def postings_of(index: SearchIndex, term: str) -> tuple[bytes, bytes]:
    term_id = index.vocabulary.lookup(term)
    start, end = int(index._offsets[term_id]), int(index._offsets[term_id + 1])
    return index._docs[start:end].tobytes(), index._impacts["bm25f"][start:end].tobytes()


def test_the_postings_of_terms_a_change_does_not_touch_keep_their_bytes(
    documents: list[Document], previous: SearchIndex
) -> None:
    changed = edited(documents, 7, documents[7].body + " zeppelin.")
    patched = SearchIndex.compile(changed, previous=previous, reference=previous.reference)
    touched = {
        t for d in (documents[7], changed[7]) for f in analyze_fields(d, previous.analyzer) for p in f for t in p
    }
    untouched = [t for t in (previous.vocabulary.term(i) for i in range(len(previous.vocabulary))) if t not in touched]
    assert len(untouched) > 1000
    assert all(postings_of(patched, term) == postings_of(previous, term) for term in untouched)
    # Without the lineage's statistics the edit moves the impacts of every term.
    fresh = SearchIndex.compile(changed)
    assert sum(postings_of(fresh, t) != postings_of(previous, t) for t in untouched) > len(untouched) // 2


def new_chunk_bytes(before: bytes, after: bytes) -> int:
    kept = {bytes(chunk) for chunk in chunks_of(before, INDEX_CHUNKS)}
    return sum(len(chunk) for chunk in chunks_of(after, INDEX_CHUNKS) if bytes(chunk) not in kept)


def test_a_patched_index_shares_most_of_its_chunks_with_the_previous_one() -> None:
    documents = collection(6000, seed=11)
    previous = SearchIndex.compile(documents, patchable=True).to_bytes()
    added = [*documents, make_document("DOC-9999", "A new entry", body="zeppelin w1 w2 token budget.")]
    patched = SearchIndex.compile(
        added, previous=SearchIndex.from_bytes(previous), reference=SearchIndex.from_bytes(previous).reference
    ).to_bytes()
    assert len(patched) > 8 * 1024 * 1024
    stored = new_chunk_bytes(previous, patched)
    assert stored < 0.15 * len(patched)
    # Normalised against the collection's own statistics, the new entry changes every impact.
    fresh = SearchIndex.compile(added, patchable=True).to_bytes()
    assert new_chunk_bytes(previous, fresh) > 3 * stored


def test_a_collection_that_drifted_is_compiled_in_full_against_statistics_measured_again(
    documents: list[Document], previous: SearchIndex, caplog: pytest.LogCaptureFixture
) -> None:
    grown = documents + collection(int(SIZE * REFERENCE_DRIFT) + 2, seed=6)
    grown = [replace(d, id=f"NEW-{i:04d}") if i >= SIZE else d for i, d in enumerate(grown)]
    with caplog.at_level(logging.INFO, logger="knowledge.retrieval.patching"):
        patched = SearchIndex.compile(grown, previous=previous, reference=previous.reference, patchable=True)
    assert "Index patched" not in caplog.text
    assert patched.reference is not None and patched.reference.documents == len(grown)
    assert patched.to_bytes() == SearchIndex.compile(grown, patchable=True).to_bytes()

    within = documents + grown[SIZE : SIZE + int(SIZE * REFERENCE_DRIFT) - 1]
    kept = SearchIndex.compile(within, previous=previous, reference=previous.reference)
    assert kept.reference == previous.reference


def test_ranking_ties_do_not_depend_on_the_patch(documents: list[Document], previous: SearchIndex) -> None:
    """Same bytes, same answers: a few topics rank identically through the patched and the full index."""
    changed = edited(documents, 12, "token budget agent release.")
    patched = SearchIndex.compile(changed, previous=previous, reference=previous.reference)
    full = SearchIndex.compile(changed, reference=previous.reference)
    for topic in ("token budget", "预算 检索", "w1 w2 w3", "release index agent", ""):
        one, other = patched.search(topic), full.search(topic)
        assert (one.mode, one.matched) == (other.mode, other.matched)
        assert [(h.position, h.score) for h in one][:20] == [(h.position, h.score) for h in other][:20]


def test_a_new_terms_hash_the_vocabulary_holds_is_found_as_np_isin_finds_it() -> None:
    known = np.array([3, 9, 9, 40, 2**64 - 1], dtype=np.uint64)
    for hashes in ([], [0], [4, 41], [9], [0, 2**64 - 1], [3], [2**63]):
        new = np.array(hashes, dtype=np.uint64)
        assert _any_known(known, new) == bool(np.isin(new, known).any())
    assert not _any_known(np.array([], dtype=np.uint64), np.array([5], dtype=np.uint64))


@pytest.mark.parametrize("positions", [[0], [SIZE - 1], [7], [3, 4, 200], list(range(0, SIZE, 37))])
def test_edits_in_place_patch_to_a_full_compiles_bytes(
    documents: list[Document], previous: SearchIndex, positions: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edits that keep every entry's place take the in-place path (rows found by doc and spliced), with
    terms only the edited entries held gone and new ones made, up to more edits than one mask each."""
    in_place: list[object] = []
    original = patching._patched_in_place

    def spy(*args: Any) -> object:
        in_place.append(args)
        return original(*args)

    monkeypatch.setattr(patching, "_patched_in_place", spy)
    rng = random.Random(len(positions))
    changed = list(documents)
    for number, position in enumerate(positions):
        words = " ".join(rng.choice(WORDS) for _ in range(len(changed[position].body.split()) - 3))
        body = f"{words} only{number}here zz{position}top a{number}a."  # as long: the statistics hold
        changed[position] = replace(changed[position], body=body)
    changed[positions[0]] = replace(changed[positions[0]], tags=("onlytagx",))

    patched, full = patched_and_full(previous, changed)

    assert in_place
    assert patched == full
    again, full_again = patched_and_full(SearchIndex.from_bytes(patched), documents)
    assert again == full_again


FEEDBACK = SearchOptions(feedback=True)


def served(index: SearchIndex) -> SearchIndex:
    """The index as a host's workers map it: with its impacts and, ranking with feedback, its forward index."""
    return SearchIndex.from_bytes(b"".join(index.served_pieces()))


@pytest.fixture(scope="module")
def previous_served(documents: list[Document]) -> SearchIndex:
    return served(SearchIndex.compile(documents, options=FEEDBACK, patchable=True))


@pytest.mark.parametrize("positions", [[0], [SIZE - 1], [7], [3, 4, 200], list(range(0, SIZE, 37))])
def test_an_edit_in_place_carries_the_derived_arrays_to_a_full_compiles_bytes(
    documents: list[Document], previous_served: SearchIndex, positions: list[int]
) -> None:
    """From a host's copy (with its forward index: it ranks with feedback), an edit carries the impacts
    and each term's cheapest entry over for the terms it does not touch: the host's copy of the result
    is a full compile's, byte for byte, and so is the copy made from it for the next edit."""
    rng = random.Random(len(positions))
    changed = list(documents)
    for number, position in enumerate(positions):
        words = " ".join(rng.choice(WORDS) for _ in range(len(changed[position].body.split()) - 3))
        changed[position] = replace(changed[position], body=f"{words} token only{number}here z{position}z.")
    changed[positions[0]] = replace(changed[positions[0]], tokens=changed[positions[0]].tokens + 40)

    reference = previous_served.reference
    patched = SearchIndex.compile(
        changed, options=FEEDBACK, previous=previous_served, reference=reference, patchable=True
    )
    full = SearchIndex.compile(changed, options=FEEDBACK, reference=reference, patchable=True)

    assert b"".join(patched.served_pieces()) == b"".join(full.served_pieces())
    again = SearchIndex.compile(documents, options=FEEDBACK, previous=served(patched), reference=reference)
    assert b"".join(again.served_pieces()) == b"".join(
        served(SearchIndex.compile(documents, options=FEEDBACK, reference=reference)).served_pieces()
    )
