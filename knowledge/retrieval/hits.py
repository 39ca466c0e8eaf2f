"""The hits of one query, evaluated on first use: scores summed over the query terms' postings in a
reused per-thread accumulator, ordered lazily; the cheapest hit's cost from per-term minimums.

A score is the float32 sum of the document's term contributions in query-plan order, times the
confidence factor in float64 (seed §4), exactly as before this module existed. Measured and rejected:
MaxScore pruning (rarest terms first, the long posting lists only looked up for the candidates that
could still reach the top): vectorized in NumPy it was 1.4-1.8x slower than this dense pass at every
query size on the 100k-entry benchmark (docs/retrieval.md).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from knowledge.retrieval.postings import term_slots
from knowledge.retrieval.ranking import ArrayHits, Prefix
from knowledge.retrieval.scoring import QueryPlan

# Below this share of postings per document, sorting the touched postings finds the hit set
# faster than scanning the whole accumulator.
SORT_SHARE = 1 / 8
# From one hit per this many documents, zeroing the whole accumulator (a memset of 4 bytes per
# document) costs fewer instructions than writing a zero to each hit (a scatter, about 20 each).
ZERO_ALL_SHARE = 32


def term_min_tokens(*, offsets: np.ndarray, docs: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """The cheapest entry containing each term (every term has at least one posting)."""
    if len(offsets) < 2:
        return np.zeros(0, dtype=np.int64)
    # The minimum in the tokens' own dtype (not a widened copy of one value per posting): the same values.
    return np.minimum.reduceat(tokens[docs], offsets[:-1]).astype(np.int64)


def term_min_tokens_carried(
    previous: np.ndarray,
    *,
    renumbered: np.ndarray,
    touched: np.ndarray,
    offsets: np.ndarray,
    docs: np.ndarray,
    tokens: np.ndarray,
) -> np.ndarray:
    """term_min_tokens after an edit in place (patching.Carried): a term the edit did not touch has the
    same postings of the same unchanged entries, so its previous value (`renumbered`: each previous
    term id's id now, -1 gone); the `touched` terms' (sorted ids) are found again."""
    found = np.empty(len(offsets) - 1, dtype=previous.dtype)
    kept = renumbered >= 0
    found[renumbered[kept]] = previous[kept]
    if len(touched):
        slots = term_slots(offsets, touched)
        starts = np.zeros(len(touched), dtype=np.int64)
        np.cumsum(np.diff(offsets)[touched][:-1], out=starts[1:])
        found[touched] = np.minimum.reduceat(tokens[docs[slots]], starts)
    return found


class Accumulators(threading.local):
    """A zeroed float32 score array per thread, reused across queries and zeroed again after each."""

    def __init__(self) -> None:
        self.array = np.zeros(0, dtype=np.float32)

    def get(self, count: int) -> np.ndarray:
        if len(self.array) != count:
            self.array = np.zeros(count, dtype=np.float32)
        return self.array


def distinct_sorted(values: np.ndarray) -> np.ndarray:
    """Sorted unique values (np.unique hashes on this NumPy and is far slower than a sort)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


@dataclass(frozen=True, slots=True)
class Summed:
    """A query's float32 sums before the confidence factor: where a query that extends its plan starts."""

    terms: int  # the plan's leading terms these sums hold
    postings: int  # their postings
    positions: np.ndarray  # the hits (ascending, less those `allowed` leaves out)
    raw: np.ndarray  # float32: each hit's sum over those terms, in plan order


class QueryHits:
    """The hit set of one query against one index (a HitSource for Ranking)."""

    def __init__(
        self,
        plan: QueryPlan,
        *,
        offsets: np.ndarray,
        docs: np.ndarray,
        impacts: np.ndarray,
        min_tokens: np.ndarray,
        factor: np.ndarray,
        tokens: np.ndarray,
        allowed: np.ndarray | None,
        accumulators: Accumulators,
        summed: Summed | None = None,
    ) -> None:
        self._offsets = offsets
        self._docs = docs
        self._impacts = impacts
        self._factor = factor
        self._tokens = tokens
        self._allowed = allowed
        self._accumulators = accumulators
        self._plan = plan
        self._term_min_tokens = min_tokens
        self._summed = summed
        # The terms still to add: all of them, or those after the ones `summed` holds.
        adding = plan.term_ids[summed.terms :] if summed is not None else plan.term_ids
        starts, ends = offsets[adding], offsets[adding + 1]
        self._slices = list(zip(starts.tolist(), ends.tolist(), strict=True))
        self._lengths = ends - starts
        self.postings = int(self._lengths.sum()) + (summed.postings if summed else 0)
        self._hits: ArrayHits | None = None

    def extended(self, plan: QueryPlan) -> QueryHits:
        """The hits of `plan`, which is this query's plan with terms added after its own (feedback):
        each hit's sum starts from this query's and only the added terms' postings are read. The same
        float32 sums as `plan` scored afresh: a document's sum runs in plan order either way, and this
        query's sum is exactly its part over the leading terms (tests/retrieval/test_fast_equivalents.py)."""
        self._evaluated()
        summed = Summed(len(self._plan.term_ids), self.postings, self._positions, self._raw)
        return QueryHits(
            plan,
            offsets=self._offsets,
            docs=self._docs,
            impacts=self._impacts,
            min_tokens=self._term_min_tokens,
            factor=self._factor,
            tokens=self._tokens,
            allowed=self._allowed,
            accumulators=self._accumulators,
            summed=summed,
        )

    def prefix(self, length: int) -> Prefix:
        return self._evaluated().prefix(length)

    @property
    def total(self) -> int:
        return self._evaluated().total

    @property
    def min_tokens(self) -> int | None:
        """The hit set is the union of the terms' postings, so its cheapest entry is the cheapest
        of the terms' cheapest entries (a category filter needs the hits themselves)."""
        if self._allowed is None:
            if not self.postings:
                return None
            return int(self._term_min_tokens[self._plan.term_ids].min())
        return self._evaluated().min_tokens

    def unordered(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """Every hit (positions ascending), its score and no link: see ranking.UnorderedHits."""
        return self._evaluated().unordered()

    def scored(self) -> tuple[np.ndarray, np.ndarray]:
        """Every hit (positions ascending) and its score: for link expansion, which needs them all."""
        self._evaluated()
        return self._positions, self._scores

    def _evaluated(self) -> ArrayHits:
        if self._hits is not None:
            return self._hits
        accumulator = self._accumulators.get(len(self._factor))
        summed = self._summed
        touched = [self._docs[start:end] for start, end in self._slices]
        impacts = [self._impacts[start:end] for start, end in self._slices]
        every = touched[0] if len(touched) == 1 else np.concatenate(touched) if touched else None
        added = impacts[0] if len(impacts) == 1 else np.concatenate(impacts) if impacts else None
        weights = self._plan.weights[summed.terms :] if summed is not None else self._plan.weights
        if added is not None and (weights != 1.0).any():
            # Each posting's impact times its term's float32 weight, in one multiplication for all
            # terms (x * 1.0f == x, so the terms of weight 1 keep their impacts exactly).
            added = added.astype(np.float32, copy=False) * weights.astype(np.float32).repeat(self._lengths)
        # Every document given a value below (the zeroing after must reach them all).
        reached = ([summed.positions] if summed is not None else []) + ([every] if every is not None else [])
        size = sum(len(part) for part in reached)
        try:
            if summed is not None:
                # The leading terms' sums as they ended: the adds below continue them in plan order.
                accumulator[summed.positions] = summed.raw
            if every is not None and added is not None:
                # One add per document and term: ufunc.at adds in index order, so each document's
                # float32 sum runs in plan order, the same sums as one call per term gave.
                np.add.at(accumulator, every, added)
            if not size:
                positions = np.zeros(0, dtype=np.int64)
            elif size < SORT_SHARE * len(accumulator):
                positions = distinct_sorted(reached[0] if len(reached) == 1 else np.concatenate(reached))
                positions = positions.astype(np.int64)
            else:
                positions = (accumulator > 0).nonzero()[0]  # impacts are > 0: touched means positive
            raw = accumulator[positions]
            if len(positions) * ZERO_ALL_SHARE >= len(accumulator):
                accumulator.fill(0.0)  # a memset: far cheaper than scattering zeros to this many hits
            else:
                accumulator[positions] = 0.0
        except BaseException:
            accumulator[:] = 0.0  # the next query on this thread must start from zeros
            raise
        if self._allowed is not None:
            # A document left out here may have been left out of `summed` too, its sum there missing:
            # it never reaches the hits.
            keep = self._allowed[positions]
            positions, raw = positions[keep], raw[keep]
        self._positions = positions
        self._raw = raw
        self._scores = raw.astype(np.float64) * self._factor[positions]
        self._hits = ArrayHits(positions, self._scores, self._tokens)
        return self._hits
