"""Query-time arithmetic over postings: the query plan, passage coverage, expansion along links."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from knowledge.retrieval.postings import ALL_BLOCKS, BLOCKS

_BIT_SHIFTS = np.arange(BLOCKS, dtype=np.uint32)
# A little-endian uint32's bytes, each unpacked least significant bit first, are its bits 0..31 in order.
_UNPACKS = BLOCKS == 32 and sys.byteorder == "little"


@dataclass(frozen=True)
class CoverageGroup:
    """Words of the topic that a synonym may stand for: covered as much as its best alternative is.

    `weight` is the coverage weight of the topic's own words; each alternative lists indices into
    the plan's terms (-1: words no entry contains) with their idf, and covers the share of its idf
    that is present.
    """

    weight: float
    alternatives: tuple[tuple[tuple[int, float], ...], ...]


@dataclass(frozen=True)
class QueryPlan:
    """Known query terms (ids, multiplicities) and the idf mass of the terms no entry contains."""

    term_ids: np.ndarray  # int64, unique
    weights: np.ndarray  # float64, query term frequency (or 1)
    informative_idf: np.ndarray  # float64, coverage weight per known term (0: does not count)
    unknown_idf: float  # coverage weight of unknown terms: they cannot be covered by any entry
    groups: tuple[CoverageGroup, ...] = ()
    numbers: tuple[int, ...] = ()  # the topic's own known terms that hold a digit (term ids)
    unknown_numbers: int = 0  # ...and how many such terms no entry contains

    @property
    def coverage_total(self) -> float:
        return float(self.informative_idf.sum()) + self.unknown_idf + sum(g.weight for g in self.groups)


@dataclass(frozen=True, slots=True)
class Coverage:
    """How much of a topic one entry holds: in its best passage, and anywhere in it (both 0..1)."""

    passage: float
    entry: float


def _term_masks(
    plan: QueryPlan, positions: np.ndarray, offsets: np.ndarray, docs: np.ndarray, blocks: np.ndarray | None
) -> np.ndarray:
    """(terms × positions) uint32: the passage blocks of each position holding each query term (0: absent).

    One binary search per term (its postings are sorted by document); the rest is done for all
    terms at once, a handful of NumPy calls per batch rather than per term.
    """
    masks = np.zeros((len(plan.term_ids), len(positions)), dtype=np.uint32)
    if not len(docs):
        return masks
    starts, ends = offsets[plan.term_ids], offsets[plan.term_ids + 1]
    slots = np.empty(masks.shape, dtype=np.intp)
    # In the postings' own type: searching int32 postings for int64 keys copies every posting first.
    needles = positions.astype(docs.dtype)
    for row, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        slots[row] = docs[start:end].searchsorted(needles)
    slots += starts[:, None]
    # A slot at a term's end reads the next term's first posting (clipped at the last): `found` needs both.
    found = (docs.take(slots, mode="clip") == needles) & (slots < ends[:, None])
    masks[found] = ALL_BLOCKS if blocks is None else blocks[slots[found]]
    return masks


def _covered_weight(plan: QueryPlan, present: np.ndarray) -> np.ndarray:
    """Coverage weight held, for presence arrays shaped (terms × ...): plain terms plus synonym groups."""
    # np.tensordot(plan.informative_idf, present, axes=(0, 0)) without its bookkeeping: the same dot.
    weights = plan.informative_idf
    held = np.dot(weights.reshape(1, len(weights)), present.reshape(len(weights), -1)).reshape(present.shape[1:])
    for group in plan.groups:
        best = np.zeros(present.shape[1:])
        for alternative in group.alternatives:
            total = sum(idf for _, idf in alternative)
            if total > 0:
                # index -1: the alternative's words no entry contains, never present
                share = sum(idf * present[index] for index, idf in alternative if index >= 0) / total
                best = np.maximum(best, share)
        held = held + group.weight * best
    return np.asarray(held, dtype=np.float64)


def _block_bits(masks: np.ndarray) -> np.ndarray:
    """(terms × positions × blocks) 0/1: bit b of each mask, in one pass where the byte order allows."""
    if _UNPACKS:
        as_bytes = np.ascontiguousarray(masks, dtype=np.uint32).view(np.uint8)
        return np.unpackbits(as_bytes.reshape(*masks.shape, 4), axis=-1, bitorder="little")
    return (masks[:, :, None] >> _BIT_SHIFTS) & 1


def coverage_many(
    plan: QueryPlan,
    positions: np.ndarray,
    *,
    offsets: np.ndarray,
    docs: np.ndarray,
    blocks: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Passage and entry coverage (0..1) of the topic for each entry position.

    A passage is one block of sentences (postings.BLOCKS) together with the entry's id, title, tags
    and aliases. A question is covered where its words occur together, not scattered over a long
    text. Without `blocks` (an index compiled before they existed) the whole entry is one passage.
    Terms no entry contains count as uncovered.
    """
    total = plan.coverage_total
    count = len(positions)
    if total <= 0 or count == 0 or not len(plan.term_ids):
        return np.zeros(count), np.zeros(count)
    masks = _term_masks(plan, np.asarray(positions, dtype=np.int64), offsets, docs, blocks)
    entry = _covered_weight(plan, (masks != 0).astype(np.float64)) / total
    bits = _block_bits(masks).astype(np.float64)  # terms × positions × blocks
    passage = _covered_weight(plan, bits).max(axis=-1) / total
    return passage, entry


def holds_rarest(plan: QueryPlan, position: int, *, offsets: np.ndarray, docs: np.ndarray) -> bool:
    """Whether the entry at `position` contains the topic's most informative known term (the one with
    the largest coverage weight; False when no term counts for coverage)."""
    weights = plan.informative_idf
    if not len(weights) or float(weights.max()) <= 0:
        return False
    return _holds(int(plan.term_ids[int(np.argmax(weights))]), position, offsets, docs)


def _holds(term: int, position: int, offsets: np.ndarray, docs: np.ndarray) -> bool:
    """Whether the entry at `position` contains `term` (one binary search in its postings)."""
    start, end = int(offsets[term]), int(offsets[term + 1])
    slot = start + int(docs[start:end].searchsorted(position))
    return slot < end and int(docs[slot]) == position


def numbers_lacking(plan: QueryPlan, position: int, *, offsets: np.ndarray, docs: np.ndarray) -> float:
    """The share of the topic's terms that hold a digit (`16`, `84m`, `3.12`, `e1101`) the entry at
    `position` does not contain; terms no entry contains are lacking too. 0 when the topic has none."""
    total = len(plan.numbers) + plan.unknown_numbers
    if not total:
        return 0.0
    held = sum(_holds(term, position, offsets, docs) for term in plan.numbers)
    return 1.0 - held / total


def coverage_of(
    plan: QueryPlan,
    position: int,
    *,
    offsets: np.ndarray,
    docs: np.ndarray,
    blocks: np.ndarray | None,
) -> Coverage:
    """The coverage of the topic by one entry (see coverage_many)."""
    passage, entry = coverage_many(plan, np.array([position]), offsets=offsets, docs=docs, blocks=blocks)
    return Coverage(passage=float(passage[0]), entry=float(entry[0]))


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
