"""Which ranked entries are relevant enough to pack: floors relative to the best hit and absolute.

Seed §4 fills the budget with whatever ranks next; an entry that shares one generic word with the
topic then rides along at relevance 0.1. Here a hit joins the pack only if its score is at least
RELATIVE_FLOOR of the best hit's and one passage of it holds at least COVERAGE_FLOOR of the
topic's informative weight, so a pack may end well below its budget. A release whose collection is
not crowded (calibration.crowding: its own held-out pseudo-questions find few entries covering them
nearly as well as their source) also asks each further hit to hold `best_share` (BEST_SHARE) of the
best hit's passage coverage. All were chosen by measurement on the development collections
(docs/retrieval.md, `python -m bench quality`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from knowledge.retrieval.ranking import EveryHit, Hit
from knowledge.retrieval.scoring import QueryPlan, coverage_many

RELATIVE_FLOOR = 0.4
CHEAPEST_FIRST = 4  # PackFloor.cheapest judges this many candidates before whole batches
COVERAGE_FLOOR = 0.15
BEST_SHARE = 0.55  # of the best hit's passage coverage, when the release's collection is not crowded


class Verdict(Enum):
    KEEP = "keep"
    SKIP = "skip"  # not relevant enough, but a later (lower-scored) hit may be
    STOP = "stop"  # below the relative floor: so is every later hit


BATCH = 32  # hits whose coverage is measured at once (one posting lookup per query term for all)


@dataclass
class PackFloor:
    """The floors of one ranking: its best score and the topic's plan against the index.

    `ranked(n)` gives the positions of the first n hits in rank order; coverage is measured for a
    batch of them at once, so a pack costs a few posting lookups per query term, not per hit.
    """

    plan: QueryPlan
    top_score: float
    offsets: np.ndarray
    docs: np.ndarray
    blocks: np.ndarray | None
    ranked: Callable[[int], np.ndarray]
    relative: float = RELATIVE_FLOOR
    absolute: float = COVERAGE_FLOOR
    best_share: float = 0.0
    _passage: dict[int, float] = field(default_factory=dict)
    _best: float = 0.0
    _cheapest: int | None = None

    @property
    def relative_floor(self) -> float:
        """The least score a hit past the best one needs (hits come in score order: below it, all stop)."""
        return self.relative * self.top_score

    def verdict(self, hit: Hit, *, first: bool) -> Verdict:
        """The best hit always joins; a hit a link brought in is judged by its score only."""
        return self.judge(hit.position, hit.score, hit.via, first=first)

    def judge(self, position: int, score: float, via: str | None, *, first: bool) -> Verdict:
        """verdict() of the hit (position, score, via)."""
        if first:
            if self.best_share:
                self._best = self._coverage(position)
            return Verdict.KEEP
        if score < self.relative_floor:
            return Verdict.STOP
        if via is not None:
            return Verdict.KEEP
        coverage = self._coverage(position)
        return Verdict.KEEP if coverage >= max(self.absolute, self.best_share * self._best) else Verdict.SKIP

    def cheapest(self, every: EveryHit, *, tokens_of: Callable[[int], int]) -> int:
        """The cost of the cheapest hit that passes the floors: what packing.cheapest_matching reports.

        No hit order is needed past the best one (it always joins and sets the coverage yardstick):
        whether a hit passes depends only on its own score, link and coverage. So hits under the
        relative floor, or costing no less than the cheapest kept so far, are never judged, and the
        rest are judged cheapest first, a batch of coverages at a time. Remembered per ranking.
        """
        if self._cheapest is not None:
            return self._cheapest
        self.judge(every.best, self.top_score, None, first=True)
        found = tokens_of(every.best)
        above = every.scores >= self.relative_floor
        near = every.positions[above]
        linked = np.zeros(len(near), dtype=bool) if every.via is None else every.via[above] >= 0
        if every.tokens is not None:
            costs = every.tokens[near].astype(np.int64)
        else:
            costs = np.fromiter((tokens_of(p) for p in near.tolist()), dtype=np.int64, count=len(near))
        if linked.any():  # a hit a link brought in is judged by its score only
            found = min(found, int(costs[linked].min()))
        cheaper = (costs < found) & ~linked
        near, costs = near[cheaper], costs[cheaper]
        order = np.argsort(costs, kind="stable")
        need = max(self.absolute, self.best_share * self._best)
        start, size = 0, CHEAPEST_FIRST
        while start < len(order):  # a few first: the cheapest candidates usually pass
            chosen = order[start : start + size]
            kept = self._coverages(near[chosen]) >= need
            if kept.any():
                found = min(found, int(costs[chosen][kept].min()))
                break
            start, size = start + size, BATCH
        self._cheapest = found
        return found

    def _coverages(self, positions: np.ndarray) -> np.ndarray:
        """The passage coverage of each position, measured once (shared with judge)."""
        missing = np.array([p for p in positions.tolist() if p not in self._passage], dtype=np.int64)
        if len(missing):
            passage, _ = coverage_many(self.plan, missing, offsets=self.offsets, docs=self.docs, blocks=self.blocks)
            self._passage.update(zip(missing.tolist(), passage.tolist(), strict=True))
        return np.array([self._passage[p] for p in positions.tolist()], dtype=np.float64)

    def remember(self, positions: np.ndarray, passages: np.ndarray) -> None:
        """Coverage the search already measured (its first batch of hits)."""
        self._passage.update(zip(positions.tolist(), passages.tolist(), strict=True))

    def _coverage(self, position: int) -> float:
        if position not in self._passage:
            batch = self.ranked(max(BATCH, 2 * len(self._passage)))
            batch = np.array([p for p in batch.tolist() if p not in self._passage] or [position], dtype=np.int64)
            passage, _ = coverage_many(self.plan, batch, offsets=self.offsets, docs=self.docs, blocks=self.blocks)
            self._passage.update(zip(batch.tolist(), passage.tolist(), strict=True))
            self._passage.setdefault(position, 0.0)  # a hit beyond the batch (never: hits come in rank order)
        return self._passage[position]
