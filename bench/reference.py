"""The seed's reference algorithm (seed §4), kept only as a benchmark baseline: a linear scan.

Every query lowercases the topic, splits it on whitespace and, for every entry, adds per term
id×8 / title×5 / tags×4 / summary×3 (substring hits) + body×min(occurrences, 6), then multiplies
by 0.85 + confidence×0.15 and sorts. Work grows with the number of entries, not the postings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.retrieval.documents import Document


@dataclass(frozen=True)
class ReferenceEntry:
    """An entry with its fields lowercased once, as the reference keeps them in memory."""

    id: str
    title: str
    tags: str
    summary: str
    body: str
    confidence: float


def prepare_entries(documents: Sequence[Document]) -> list[ReferenceEntry]:
    return [
        ReferenceEntry(
            d.id.lower(), d.title.lower(), " ".join(d.tags).lower(), d.summary.lower(), d.body.lower(), d.confidence
        )
        for d in documents
    ]


def score_linear(entries: Sequence[ReferenceEntry], topic: str) -> tuple[list[tuple[float, int]], bool]:
    """(score, position) pairs of every hit, best first, and the seed's `matched` (any term hit)."""
    terms = topic.lower().split()
    scored: list[tuple[float, int]] = []
    for position, entry in enumerate(entries):
        score = 0.0
        for term in terms:
            score += 8 * (term in entry.id) + 5 * (term in entry.title) + 4 * (term in entry.tags)
            score += 3 * (term in entry.summary) + min(entry.body.count(term), 6)
        if score > 0:
            scored.append((score * (0.85 + entry.confidence * 0.15), position))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return scored, bool(scored)
