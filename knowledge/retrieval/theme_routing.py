"""Theme routing (issue 16 §3, the Cadau and OKF two-layer index), as an experiment: route a topic to
the best themes first, then rank entries only inside them.

A theme is read as a small document: its title and description, and the titles and summaries of its
entries (routing reads summaries, never bodies). The topic is ranked against the themes with the same
engine; entries outside the ``top`` themes are left out of the entry ranking. When no theme shares a
word with the topic the ranking is the plain one. ``python -m bench.theme_routing`` measures it on a
development split; ``/api/context`` does not route until a measurement says it helps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from knowledge.retrieval.documents import Document
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.ranking import Ranking
from knowledge.retrieval.tokens import entry_tokens

ROUTED_THEMES = 2  # Cadau routes to its two best themes


@dataclass(frozen=True, slots=True)
class RoutingTheme:
    """A theme with the index positions of its entries."""

    slug: str
    title: str
    summary: str
    positions: tuple[int, ...]


class ThemeRouter:
    """Ranks themes for a topic and masks the entries outside the best ones."""

    def __init__(self, themes: Sequence[RoutingTheme], documents: Sequence[Document], *, top: int = ROUTED_THEMES):
        self._themes = tuple(themes)
        self._count = len(documents)
        self._top = top
        cards = []
        for number, theme in enumerate(self._themes):
            members = " ".join(f"{documents[p].title} {documents[p].summary}" for p in theme.positions)
            cards.append(
                Document(
                    id=f"TH-{number + 1:03d}",
                    category="theme",
                    title=theme.title,
                    summary=theme.summary,
                    body=members,
                    tags=(),
                    confidence=1.0,
                    tokens=entry_tokens(title=theme.title, summary=theme.summary, body=members),
                )
            )
        self._index = SearchIndex.compile(cards)

    def routed(self, topic: str) -> list[RoutingTheme]:
        """The best themes for the topic (none when no theme shares a word with it)."""
        ranking = self._index.search(topic)
        if ranking.mode not in ("match", "weak"):
            return []
        return [self._themes[hit.position] for hit, _ in zip(ranking, range(self._top), strict=False)]

    def exclude(self, topic: str) -> np.ndarray | None:
        """The mask of entries outside the routed themes, or None (no routing) when none is routed."""
        themes = self.routed(topic)
        if not themes:
            return None
        keep = np.zeros(self._count, dtype=bool)
        for theme in themes:
            keep[list(theme.positions)] = True
        return ~keep


def routed_search(index: SearchIndex, router: ThemeRouter, topic: str) -> Ranking:
    """The entry ranking inside the topic's best themes (the plain ranking when none is routed)."""
    return index.search(topic, exclude=router.exclude(topic))
