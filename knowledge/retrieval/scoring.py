"""Query-time arithmetic over postings: the query plan, passage coverage, expansion along links."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from knowledge.retrieval.postings import ALL_BLOCKS, BLOCKS

_BIT_SHIFTS = np.arange(BLOCKS, dtype=np.uint32)


@dataclass(frozen=True)
class QueryPlan:
    """Known query terms (ids, multiplicities) and the idf mass of the terms no entry contains."""

    term_ids: np.ndarray  # int64, unique
    weights: np.ndarray  # float64, query term frequency (or 1)
    informative_idf: np.ndarray  # float64, coverage weight per known term (0: does not count)
    unknown_idf: float  # coverage weight of unknown terms: they cannot be covered by any entry


def coverage_of(
    plan: QueryPlan,
    position: int,
    *,
    offsets: np.ndarray,
    docs: np.ndarray,
    blocks: np.ndarray | None,
) -> float:
    """Share (0..1) of the query's coverage weight that one passage of the entry at `position` holds.

    A passage is one block of sentences (postings.BLOCKS) together with the entry's id, title and
    tags. A question is covered where its words occur together, not scattered over a long text.
    Without `blocks` (an index compiled before they existed) the whole entry is one passage.
    """
    total = float(plan.informative_idf.sum()) + plan.unknown_idf
    if total <= 0:
        return 0.0
    weights: list[float] = []
    masks: list[int] = []
    for term_id, weight in zip(plan.term_ids, plan.informative_idf, strict=True):
        if weight <= 0:
            continue
        start, end = int(offsets[term_id]), int(offsets[term_id + 1])
        slot = start + int(np.searchsorted(docs[start:end], position))
        if slot < end and docs[slot] == position:
            weights.append(float(weight))
            masks.append(int(ALL_BLOCKS if blocks is None else blocks[slot]))
    if not weights:
        return 0.0
    bits = (np.array(masks, dtype=np.uint32)[:, None] >> _BIT_SHIFTS) & 1
    return float(np.max(np.array(weights) @ bits)) / total


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
