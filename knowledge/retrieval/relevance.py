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

from knowledge.retrieval.ranking import Hit
from knowledge.retrieval.scoring import QueryPlan, coverage_many

RELATIVE_FLOOR = 0.4
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

    def verdict(self, hit: Hit, *, first: bool) -> Verdict:
        """The best hit always joins; a hit a link brought in is judged by its score only."""
        return self.judge(hit.position, hit.score, hit.via, first=first)

    def judge(self, position: int, score: float, via: str | None, *, first: bool) -> Verdict:
        """verdict() of the hit (position, score, via)."""
        if first:
            if self.best_share:
                self._best = self._coverage(position)
            return Verdict.KEEP
        if score < self.relative * self.top_score:
            return Verdict.STOP
        if via is not None:
            return Verdict.KEEP
        coverage = self._coverage(position)
        return Verdict.KEEP if coverage >= max(self.absolute, self.best_share * self._best) else Verdict.SKIP

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
