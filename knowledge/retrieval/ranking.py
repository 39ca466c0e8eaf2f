"""The result of one search: a hit set ordered lazily, by score then position (seed §4 order)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

if TYPE_CHECKING:
    from knowledge.retrieval.relevance import PackFloor
    from knowledge.retrieval.scoring import Coverage

MODES = ("browse", "match", "weak", "fallback")
RANKERS = ("bm25f", "seed")
PACKINGS = ("relevant", "seed")
# First slice to order; the packer usually stops within it, and each later slice is 4x larger.
FIRST_SLICE = 32


@dataclass(frozen=True)
class SearchOptions:
    """Per-search knobs; an index compiled with options uses them as its defaults."""

    ranker: str = "bm25f"
    expand: bool = False
    match_threshold: float | None = None
    # "relevant": only hits above the relevance floors are packed; "seed": fill the budget (seed §4).
    packing: str = "relevant"
    # With "relevant": a further hit must also hold this share of the best hit's passage coverage
    # (a release calibrates it from its own collection: calibration.pack_best_share).
    pack_best_share: float = 0.0
    # Rank again with the terms the best entries share (feedback.py); a release switches it on when
    # its collection is crowded (calibration.feedback_on).
    feedback: bool = False

    def __post_init__(self) -> None:
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown ranker {self.ranker!r}; expected one of {RANKERS}")
        if self.packing not in PACKINGS:
            raise ValueError(f"unknown packing {self.packing!r}; expected one of {PACKINGS}")


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked document: its position in the compiled sequence, its score, who brought it in."""

    position: int
    score: float
    via: str | None = None


@dataclass(frozen=True, slots=True)
class Prefix:
    """The first hits in rank order (exact), and whether they are all the hits there are."""

    positions: np.ndarray  # int64
    scores: np.ndarray  # float64
    via: np.ndarray | None  # int64 position of the hit that brought each one in, -1 for none
    complete: bool


class HitSource(Protocol):
    """Where a Ranking's hits come from: materialized arrays, or a query evaluated on demand."""

    def prefix(self, length: int) -> Prefix:
        """At least `length` hits in rank order (fewer only when complete)."""
        ...

    @property
    def total(self) -> int: ...

    @property
    def min_tokens(self) -> int | None: ...


class UnorderedHits(Protocol):
    """A hit source that can hand over its whole hit set without ordering it."""

    def unordered(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        """(positions, scores, via) of every hit, in no particular order, and each entry's tokens by position."""
        ...


@dataclass(frozen=True, slots=True)
class EveryHit:
    """The whole hit set in no particular order, and the first hit in rank order."""

    best: int
    positions: np.ndarray
    scores: np.ndarray
    via: np.ndarray | None  # as Prefix.via
    tokens: np.ndarray | None  # each entry's tokens by position, when the source has them as an array


def ranked_rounds(positions: np.ndarray, scores: np.ndarray) -> Iterator[np.ndarray]:
    """Indices into `positions` by score descending, then position ascending, a round at a time.

    Each round finds the k-th best remaining score with a partition, takes every candidate at
    least as good (so ties never straddle two rounds), and sorts only that slice; the rest is
    only gathered if the caller asks for more.
    """
    remaining: np.ndarray | None = None  # None: every index
    k = FIRST_SLICE
    while True:
        current = scores if remaining is None else scores[remaining]
        if len(current) > k:
            # np.partition(current, kth)[kth] without its Python wrapper: the same copy, partitioned in place.
            part = current.copy()
            part.partition(len(current) - k)
            take = current >= part[len(current) - k]
        elif len(current):
            take = np.ones(len(current), dtype=bool)
        else:
            return
        chosen = take.nonzero()[0] if remaining is None else remaining[take]
        yield chosen[np.lexsort((positions[chosen], -scores[chosen]))]
        remaining = (~take).nonzero()[0] if remaining is None else remaining[~take]
        k *= 4


def iter_ranked(positions: np.ndarray, scores: np.ndarray) -> Iterator[int]:
    """Yield indices into `positions` by score descending, then position ascending, lazily."""
    for ranked in ranked_rounds(positions, scores):
        yield from ranked.tolist()


class ArrayHits:
    """A hit set held as arrays: already in rank order (`ordered`), or ordered lazily on demand.

    A prefix holds as many hits as the longest one asked for so far (all of them when `ordered`);
    the order is extended a round of ranked_rounds at a time, and the last prefix is reused.
    """

    def __init__(
        self,
        positions: np.ndarray,
        scores: np.ndarray,
        tokens: np.ndarray,
        *,
        via: np.ndarray | None = None,
        ordered: bool = False,
    ) -> None:
        self._positions = positions
        self._scores = scores
        self._tokens = tokens
        self._via = via
        count = len(positions)
        self._rounds: Iterator[np.ndarray] | None = None if ordered else ranked_rounds(positions, scores)
        self._ranked = np.arange(count, dtype=np.int64) if ordered else np.zeros(0, dtype=np.int64)
        self._served = count if ordered else 0  # the length of the prefix given
        self._prefix: Prefix | None = None

    @property
    def total(self) -> int:
        return len(self._positions)

    @property
    def min_tokens(self) -> int | None:
        return int(self._tokens[self._positions].min()) if len(self._positions) else None

    def unordered(self) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
        return self._positions, self._scores, self._via, self._tokens

    def prefix(self, length: int) -> Prefix:
        served = max(self._served, min(length, self.total))
        if self._prefix is not None and served == self._served:
            return self._prefix
        while len(self._ranked) < served and self._rounds is not None:
            self._ranked = np.concatenate([self._ranked, next(self._rounds)])
        chosen = self._ranked[:served]
        self._served = served
        self._prefix = Prefix(
            positions=self._positions[chosen],
            scores=self._scores[chosen],
            via=None if self._via is None else self._via[chosen],
            complete=served == self.total,
        )
        return self._prefix


@dataclass(frozen=True, slots=True)
class MatchFacts:
    """How well the best hit covers the topic (match and weak rankings).

    `gate_score` is the match score less the coverage penalty, or -inf when the best entry holds too
    little of the topic to ever match (index.gate_score_of); `matched` is gate_score >= the
    threshold, and calibration reads gate_score.
    `relevance` holds the floors a hit must pass to be packed (None: pack in rank order, seed §4).
    """

    match_score: float
    coverage: Coverage
    gate_score: float
    relevance: PackFloor | None


class Ranking:
    """A search result. Iterating yields hits in rank order without ranking the whole hit set.

    `total` (the hit count) and `min_tokens` (the cheapest hit's cost) are computed when read.
    """

    def __init__(
        self,
        *,
        mode: str,
        matched: bool,
        hits: HitSource,
        public_id: Callable[[int], str] | None = None,
        facts: MatchFacts | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.matched = matched
        self._hits = hits
        self._public_id = public_id
        self.facts = facts

    @property
    def match_score(self) -> float | None:
        return None if self.facts is None else self.facts.match_score

    @property
    def coverage(self) -> Coverage | None:
        return None if self.facts is None else self.facts.coverage

    @property
    def gate_score(self) -> float | None:
        return None if self.facts is None else self.facts.gate_score

    @property
    def relevance(self) -> PackFloor | None:
        return None if self.facts is None else self.facts.relevance

    @property
    def total(self) -> int:
        return self._hits.total

    @property
    def min_tokens(self) -> int | None:
        return self._hits.min_tokens

    @property
    def hit_source(self) -> HitSource:
        return self._hits

    def every_hit(self) -> EveryHit | None:
        """Every hit and the best one, without ordering the rest (None when nothing hit)."""
        first = self._hits.prefix(1)
        if not len(first.positions):
            return None
        # The method looked up, not isinstance: a runtime Protocol check walks the protocol's
        # attributes on every call (15 us a miss).
        unordered = getattr(self._hits, "unordered", None)
        if unordered is not None:
            return EveryHit(int(first.positions[0]), *unordered())
        whole = self._hits.prefix(self._hits.total)
        return EveryHit(int(first.positions[0]), whole.positions, whole.scores, whole.via, None)

    def __iter__(self) -> Iterator[Hit]:
        for position, score, via in self.ranked():
            yield Hit(position, score, via)

    def ranked(self) -> Iterator[tuple[int, float, str | None]]:
        """The hits in rank order as (position, score, via) without a Hit object each: the packer
        looks at many more hits than it keeps."""
        length, done = FIRST_SLICE, 0
        while True:
            prefix = self._hits.prefix(length)
            positions = prefix.positions[done:].tolist()
            scores = prefix.scores[done:].tolist()
            if prefix.via is not None and self._public_id is not None:
                vias = [self._via_name(prefix.via, index) for index in range(done, done + len(positions))]
                yield from zip(positions, scores, vias, strict=True)
            else:
                for position, score in zip(positions, scores, strict=True):
                    yield position, score, None
            done = len(prefix.positions)
            if prefix.complete:
                return
            length *= 4

    def __len__(self) -> int:
        return self.total

    def _via_name(self, via: np.ndarray | None, index: int) -> str | None:
        if via is None or self._public_id is None or via[index] < 0:
            return None
        return self._public_id(int(via[index]))

    def __repr__(self) -> str:
        return f"<Ranking mode={self.mode} matched={self.matched}>"
