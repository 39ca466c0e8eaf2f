"""The result of one search: a hit set ordered lazily, by score then position (seed §4 order)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

MODES = ("browse", "match", "fallback")
RANKERS = ("bm25f", "seed")
# First slice to order; the packer usually stops within it, and each later slice is 4x larger.
FIRST_SLICE = 32


@dataclass(frozen=True)
class SearchOptions:
    """Per-search knobs; an index compiled with options uses them as its defaults."""

    ranker: str = "bm25f"
    expand: bool = False
    match_threshold: float | None = None

    def __post_init__(self) -> None:
        if self.ranker not in RANKERS:
            raise ValueError(f"unknown ranker {self.ranker!r}; expected one of {RANKERS}")


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked document: its position in the compiled sequence, its score, who brought it in."""

    position: int
    score: float
    via: str | None = None


def iter_ranked(positions: np.ndarray, scores: np.ndarray) -> Iterator[int]:
    """Yield indices into `positions` by score descending, then position ascending, lazily.

    Each round takes the best `k` remaining scores with argpartition, widens the cut to every
    candidate tied with the k-th (so ties never straddle two rounds), and sorts only that slice.
    """
    remaining = np.arange(len(positions))
    k = FIRST_SLICE
    while len(remaining):
        if len(remaining) > k:
            remaining_scores = scores[remaining]
            cut = remaining_scores[np.argpartition(-remaining_scores, k - 1)[k - 1]]
            take = remaining_scores >= cut
            chosen, remaining = remaining[take], remaining[~take]
        else:
            chosen, remaining = remaining, remaining[:0]
        for index in chosen[np.lexsort((positions[chosen], -scores[chosen]))]:
            yield int(index)
        k *= 4


class Ranking:
    """A search result. Iterating yields hits in rank order without sorting the whole hit set."""

    def __init__(
        self,
        *,
        mode: str,
        matched: bool,
        positions: np.ndarray,
        scores: np.ndarray,
        tokens: np.ndarray,
        via: np.ndarray | None = None,
        public_id: Callable[[int], str] | None = None,
        ordered: bool = False,
        match_score: float | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode
        self.matched = matched
        self._positions = positions
        self._scores = scores
        self._via = via
        self._public_id = public_id
        self._ordered = ordered
        self.total = len(positions)
        # The value `matched` was decided on (match and fallback after scoring; None otherwise):
        # evaluation calibrates SearchOptions.match_threshold from it.
        self.match_score = match_score
        self.min_tokens: int | None = int(tokens[positions].min()) if len(positions) else None

    def __iter__(self) -> Iterator[Hit]:
        indices: Iterator[int] = (
            iter(range(self.total)) if self._ordered else iter_ranked(self._positions, self._scores)
        )
        for index in indices:
            yield Hit(
                position=int(self._positions[index]),
                score=float(self._scores[index]),
                via=self._via_of(index),
            )

    def __len__(self) -> int:
        return self.total

    def _via_of(self, index: int) -> str | None:
        if self._via is None or self._public_id is None or self._via[index] < 0:
            return None
        return self._public_id(int(self._via[index]))

    def __repr__(self) -> str:
        return f"<Ranking mode={self.mode} matched={self.matched} total={self.total}>"
