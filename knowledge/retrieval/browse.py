"""The public entry list of a release: pages of entries, optionally one category's or a search's, in cost
independent of the namespace's size (a page is a slice; a search reads its terms' postings, never every entry)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.snapshot import EntryRecord

PAGE_SIZE = 50
SEARCH_LIMIT = 500  # a search lists at most this many entries, best first
LISTED_MODES = ("match", "weak")  # the confidence fallback is not an answer to a search


@dataclass(frozen=True, slots=True)
class BrowsePage:
    entries: tuple[EntryRecord, ...]
    total: int  # entries listed across all pages
    page: int
    pages: int
    query: str
    category: str | None
    capped: bool  # the search found more than SEARCH_LIMIT entries

    @property
    def first_number(self) -> int:
        """The 1-based position of the page's first entry ("51–100 of 1,400")."""
        return (self.page - 1) * PAGE_SIZE + 1 if self.entries else 0

    @property
    def last_number(self) -> int:
        return self.first_number + len(self.entries) - 1 if self.entries else 0


class PageOutOfRangeError(ValueError):
    """A page number past the last page; `pages` says how many there are."""

    def __init__(self, pages: int) -> None:
        super().__init__(pages)
        self.pages = pages


def category_positions(entries: Sequence[EntryRecord]) -> dict[str, tuple[int, ...]]:
    """Each category's entries by position; computed once per loaded release."""
    found: dict[str, list[int]] = {}
    for position, entry in enumerate(entries):
        found.setdefault(entry.category, []).append(position)
    return {category: tuple(positions) for category, positions in found.items()}


def _searched(
    entries: Sequence[EntryRecord],
    index: SearchIndex,
    by_id: Mapping[str, int],
    query: str,
    category: str | None,
) -> tuple[list[int], bool]:
    """Positions of the entries a search lists: an exact ID first, then the engine's ranked hits."""
    listed: list[int] = []
    exact = by_id.get(query.upper())
    if exact is not None and (category is None or entries[exact].category == category):
        listed.append(exact)
    ranking = index.search(query, category=category)
    if ranking.mode in LISTED_MODES:
        for hit in ranking:
            position = by_id.get(index.public_id(hit.position))
            if position is not None and position not in listed:
                listed.append(position)
            if len(listed) > SEARCH_LIMIT:
                break
    return listed[:SEARCH_LIMIT], len(listed) > SEARCH_LIMIT


def browse_entries(
    *,
    entries: Sequence[EntryRecord],
    index: SearchIndex,
    by_id: Mapping[str, int],
    by_category: Mapping[str, Sequence[int]],
    query: str = "",
    category: str | None = None,
    page: int = 1,
) -> BrowsePage:
    """One page of the entry list; raises PageOutOfRangeError past the last page (page 1 always exists)."""
    capped = False
    positions: Sequence[int]
    if query:
        positions, capped = _searched(entries, index, by_id, query, category)
    elif category is not None:
        positions = by_category.get(category, ())
    else:
        positions = range(len(entries))
    pages = max(1, -(-len(positions) // PAGE_SIZE))
    if page > pages:
        raise PageOutOfRangeError(pages)
    start = (page - 1) * PAGE_SIZE
    chosen = tuple(entries[p] for p in positions[start : start + PAGE_SIZE])
    return BrowsePage(chosen, len(positions), page, pages, query, category, capped)
