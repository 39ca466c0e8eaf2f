"""Query-time arithmetic over postings: accumulate impacts, measure coverage, expand along links."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class QueryPlan:
    """Known query terms (ids, multiplicities) and the idf mass of the terms no entry contains."""

    term_ids: np.ndarray  # int64, unique
    weights: np.ndarray  # float64, query term frequency (or 1)
    informative_idf: np.ndarray  # float64, idf per known term, for coverage
    unknown_idf: float  # idf mass of unknown terms: they cannot be covered by any entry


def accumulate_scores(
    plan: QueryPlan,
    *,
    offsets: np.ndarray,
    docs: np.ndarray,
    impacts: np.ndarray,
    count: int,
    allowed: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Candidate positions (ascending) and their raw scores; work ~ the postings of the terms."""
    slices = [(int(offsets[t]), int(offsets[t + 1])) for t in plan.term_ids]
    touched = sum(end - start for start, end in slices)
    if touched == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    accumulator = np.zeros(count, dtype=np.float32)
    for (start, end), weight in zip(slices, plan.weights, strict=True):
        # Doc ids are unique inside one term's postings, so fancy-index += is exact here.
        accumulator[docs[start:end]] += impacts[start:end].astype(np.float32) * np.float32(weight)
    if touched * 8 < count:
        candidates = np.unique(np.concatenate([docs[s:e] for s, e in slices])).astype(np.int64)
    else:
        candidates = np.flatnonzero(accumulator)
    if allowed is not None:
        candidates = candidates[allowed[candidates]]
    return candidates, accumulator[candidates].astype(np.float64)


def coverage_of(plan: QueryPlan, position: int, *, offsets: np.ndarray, docs: np.ndarray) -> float:
    """Share of the query's idf mass whose terms occur in the entry at `position` (0..1)."""
    covered = 0.0
    for term_id, idf in zip(plan.term_ids, plan.informative_idf, strict=True):
        start, end = int(offsets[term_id]), int(offsets[term_id + 1])
        slot = start + int(np.searchsorted(docs[start:end], position))
        if slot < end and docs[slot] == position:
            covered += float(idf)
    total = float(plan.informative_idf.sum()) + plan.unknown_idf
    return covered / total if total > 0 else 0.0


def expand_links(
    top_positions: list[int],
    top_scores: list[float],
    *,
    link_offsets: np.ndarray,
    link_targets: np.ndarray,
    in_hit_set: np.ndarray,
    allowed: np.ndarray | None,
    factor: float,
) -> tuple[list[int], list[float], list[int]]:
    """Linked neighbours of the top hits not yet in the hit set: (positions, scores, parents).

    A neighbour joins at `factor` × its best parent's score; the first (best) parent wins.
    """
    seen: set[int] = set()
    positions: list[int] = []
    scores: list[float] = []
    parents: list[int] = []
    for parent, score in zip(top_positions, top_scores, strict=True):
        for target in link_targets[link_offsets[parent] : link_offsets[parent + 1]]:
            neighbour = int(target)
            if in_hit_set[neighbour] or neighbour in seen:
                continue
            if allowed is not None and not allowed[neighbour]:
                continue
            seen.add(neighbour)
            positions.append(neighbour)
            scores.append(score * factor)
            parents.append(parent)
    return positions, scores, parents
