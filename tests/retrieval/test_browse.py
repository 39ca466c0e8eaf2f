"""The public entry list: pages are slices, categories and searches list only what they name, in rank order."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from knowledge.retrieval.browse import (
    PAGE_SIZE,
    SEARCH_LIMIT,
    BrowsePage,
    PageOutOfRangeError,
    browse_entries,
    category_positions,
)
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.snapshot import EntryRecord
from tests.retrieval.helpers import make_document

TOPICS = ("wing lift", "boundary layer", "shock wave", "heat transfer")


def record(number: int) -> EntryRecord:
    topic = TOPICS[number % len(TOPICS)]
    return EntryRecord(
        id=f"AE-{number:04d}",
        category="flow" if number % 3 else "heat",
        title=f"{topic} study {number}",
        summary="",
        body=f"A report on {topic} measured in tunnel {number}.",
        tags=(),
        confidence=0.9,
        tokens=20,
        updated="2026-01-01",
        version=1,
        content_hash="0" * 64,
    )


@cache
def release(count: int = 130) -> tuple[tuple[EntryRecord, ...], SearchIndex]:
    entries = tuple(record(n) for n in range(1, count + 1))
    documents = [make_document(e.id, e.title, category=e.category, body=e.body) for e in entries]
    return entries, SearchIndex.compile(documents)


def browse(**kwargs: Any) -> BrowsePage:
    entries, index = release()
    return browse_entries(
        entries=entries,
        index=index,
        by_id={e.id: i for i, e in enumerate(entries)},
        by_category=category_positions(entries),
        **kwargs,
    )


def test_pages_are_consecutive_slices_of_the_release_order() -> None:
    first, third = browse(page=1), browse(page=3)

    assert [e.id for e in first.entries] == [f"AE-{n:04d}" for n in range(1, PAGE_SIZE + 1)]
    assert (first.total, first.pages, third.page) == (130, 3, 3)
    assert len(third.entries) == 130 - 2 * PAGE_SIZE
    assert (third.first_number, third.last_number) == (101, 130)


def test_a_page_past_the_last_says_how_many_there_are() -> None:
    with pytest.raises(PageOutOfRangeError) as raised:
        browse(page=4)

    assert raised.value.pages == 3


def test_an_empty_search_result_is_still_page_one() -> None:
    listing = browse(query="zeppelin mooring")

    assert (listing.entries, listing.total, listing.pages) == ((), 0, 1)


def test_a_category_lists_only_its_entries() -> None:
    listing = browse(category="heat")

    assert listing.total == len([n for n in range(1, 131) if n % 3 == 0])
    assert {e.category for e in listing.entries} == {"heat"}


def test_a_search_lists_matching_entries_best_first_and_no_fallback() -> None:
    listing = browse(query="shock wave")

    assert listing.total == len([n for n in range(1, 131) if n % 4 == 2])
    assert all("shock wave" in e.title for e in listing.entries)


def test_a_search_for_an_id_puts_that_entry_first() -> None:
    listing = browse(query="ae-0042")

    assert listing.entries[0].id == "AE-0042"


def test_a_search_within_a_category_stays_in_it() -> None:
    listing = browse(query="heat transfer", category="flow")

    assert listing.entries and {e.category for e in listing.entries} == {"flow"}


def test_a_broad_search_is_capped() -> None:
    entries, index = release(SEARCH_LIMIT + 80)
    listing = browse_entries(
        entries=entries,
        index=index,
        by_id={e.id: i for i, e in enumerate(entries)},
        by_category=category_positions(entries),
        query="study tunnel report",
    )

    assert listing.total == SEARCH_LIMIT and listing.capped
