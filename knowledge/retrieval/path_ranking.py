"""A ranking for a request with ``paths`` (issue 16 §2): the entries whose globs match come first,
in priority order and within the budget, then the topic's hits among the entries without globs.

Entries with globs never rank by topic when paths are sent: they apply (their globs match a path)
or they are left out. Without ``paths`` nothing here runs and every entry ranks as before.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from knowledge.retrieval.index import BROWSE_SCORE, SearchIndex
from knowledge.retrieval.packing import OMITTED_LISTED, Pack, pack_to_budget
from knowledge.retrieval.paths import Applicable, PathScope
from knowledge.retrieval.ranking import Hit, HitSource, Prefix, Ranking


class PathFirstHits:
    """The applicable entries (fixed order, one score), then another hit source's hits."""

    def __init__(self, loaded: Sequence[int], score: float, loaded_min_tokens: int | None, rest: Ranking | None):
        self._loaded = np.array(loaded, dtype=np.int64)
        self._score = score
        self._loaded_min = loaded_min_tokens
        self._rest: HitSource | None = None if rest is None else rest.hit_source

    @property
    def total(self) -> int:
        return len(self._loaded) + (self._rest.total if self._rest is not None else 0)

    @property
    def min_tokens(self) -> int | None:
        found = [m for m in (self._loaded_min, self._rest.min_tokens if self._rest else None) if m is not None]
        return min(found, default=None)

    def prefix(self, length: int) -> Prefix:
        head = len(self._loaded)
        scores = np.full(head, self._score, dtype=np.float64)
        via = np.full(head, -1, dtype=np.int64)
        if self._rest is None or length <= head:
            return Prefix(self._loaded, scores, via, complete=self._rest is None or self._rest.total == 0)
        rest = self._rest.prefix(length - head)
        rest_via = rest.via if rest.via is not None else np.full(len(rest.positions), -1, dtype=np.int64)
        return Prefix(
            positions=np.concatenate([self._loaded, rest.positions]),
            scores=np.concatenate([scores, rest.scores]),
            via=np.concatenate([via, rest_via]),
            complete=rest.complete,
        )


class PathRanking(Ranking):
    """Iterates the applicable entries, then the topic's hits; packs them in that order (``pack``)."""

    def __init__(
        self,
        *,
        applicable: Sequence[Applicable],
        topic: Ranking | None,
        tokens_of: Callable[[int], int],
        public_id: Callable[[int], str],
    ) -> None:
        # Topic hits join the applicable entries only when they match: a weak or fallback hit set
        # must not be cited, and it would turn a pack of applicable rules into one that says so.
        rest = topic if topic is not None and (topic.matched or not applicable) else None
        top = next(iter(rest), None) if rest is not None and rest.mode != "browse" else None
        score = max(BROWSE_SCORE, top.score if top is not None else 0.0)
        loaded = [a.position for a in applicable]
        loaded_min = min((tokens_of(p) for p in loaded), default=None)
        if rest is not None and not applicable:
            mode, matched, facts = rest.mode, rest.matched, rest.facts
        else:
            mode, matched, facts = ("browse" if topic is None else "match"), bool(applicable), None
        super().__init__(
            mode=mode,
            matched=matched,
            hits=PathFirstHits(loaded, score, loaded_min, rest),
            public_id=public_id,
            facts=facts,
        )
        self.matched_paths = {a.position: a.paths for a in applicable}
        self._loaded = tuple(Hit(position, score) for position in loaded)
        self._loaded_min = loaded_min
        self._rest = rest
        self._tokens_of = tokens_of

    @property
    def no_path_applies(self) -> bool:
        """Paths and no topic, and no entry's globs match them: an empty pack that says so."""
        return self.mode == "browse" and not self.matched_paths

    def pack(self, *, budget: int, limit: int | None) -> Pack:
        """The applicable entries first (each whole or skipped), then the topic's hits in what is left."""
        first = pack_to_budget(
            self._loaded, tokens_of=self._tokens_of, budget=budget, min_tokens=self._loaded_min, limit=limit
        )
        if self._rest is None:
            return first
        left = None if limit is None else max(0, limit - len(first.packed))
        # What the limit left out of the applicable entries takes its tokens out of the topic's hits' share
        # too, so over_limit names exactly what the pack would have held without the limit.
        rest = pack_to_budget(
            self._rest,
            tokens_of=self._tokens_of,
            budget=budget - first.used_tokens - first.over_limit_tokens,
            min_tokens=self._rest.min_tokens,
            limit=left,
            relevance=self._rest.relevance,
        )
        return Pack(
            packed=first.packed + rest.packed,
            omitted=(first.omitted + rest.omitted)[:OMITTED_LISTED],
            used_tokens=first.used_tokens + rest.used_tokens,
            truncated=first.truncated or rest.truncated,
            over_limit=(first.over_limit + rest.over_limit)[:OMITTED_LISTED],
            over_limit_tokens=first.over_limit_tokens + rest.over_limit_tokens,
        )


def path_search(
    *,
    index: SearchIndex,
    scope: PathScope,
    topic: str,
    category: str | None,
    paths: Sequence[str],
    category_of: Callable[[int], str],
    tokens_of: Callable[[int], int],
) -> PathRanking:
    """Rank a request with paths: the applicable entries of `category`, then `topic`'s hits (if any)
    among the entries without globs."""
    applicable = [a for a in scope.applicable(paths) if category is None or category_of(a.position) == category]
    ranked = None
    if topic.strip():
        ranked = index.search(topic, category=category, exclude=scope.scoped if scope else None)
    return PathRanking(applicable=applicable, topic=ranked, tokens_of=tokens_of, public_id=index.public_id)
