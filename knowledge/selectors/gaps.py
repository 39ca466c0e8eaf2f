"""Reads for the knowledge-gap report: a release's compiled index (to analyse topics) and the top open gaps."""

from __future__ import annotations

import threading
from collections import OrderedDict
from datetime import datetime, timedelta

from django.db.models import QuerySet

from knowledge.models import GapStatus, KnowledgeGap, Namespace
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render.release import SEARCH_INDEX
from knowledge.selectors.artifacts import artifact_content

INDEXES_MAX = 4
GROUPS_COMPARED = 2000  # a new topic joins one of the namespace's latest gaps, or starts its own

_indexes: OrderedDict[int, SearchIndex] = OrderedDict()
_lock = threading.Lock()


def release_index(*, release_id: int) -> SearchIndex:
    """The release's compiled index alone (not its artifacts or snapshot), kept for the last few releases."""
    with _lock:
        found = _indexes.get(release_id)
        if found is not None:
            _indexes.move_to_end(release_id)
            return found
    index = SearchIndex.from_bytes(artifact_content(release_id=release_id, name=SEARCH_INDEX))
    with _lock:
        _indexes[release_id] = index
        while len(_indexes) > INDEXES_MAX:
            _indexes.popitem(last=False)
    return index


def gaps_groups(*, namespace_id: int, limit: int = GROUPS_COMPARED) -> list[tuple[str, frozenset[str]]]:
    """(key, terms) of the namespace's most recently seen gaps, which a new topic may join."""
    rows = KnowledgeGap.objects.filter(namespace_id=namespace_id).order_by("-last_seen").values_list("key", "terms")
    return [(key, frozenset(terms)) for key, terms in rows[:limit]]


def gaps_top(*, namespace: Namespace, since: datetime, count: int = 10) -> QuerySet[KnowledgeGap]:
    """The open gaps asked about since `since`, most asked first."""
    return KnowledgeGap.objects.filter(namespace=namespace, status=GapStatus.OPEN, last_seen__gte=since).order_by(
        "-count", "-last_seen"
    )[:count]


def digest_window(now: datetime) -> datetime:
    return now - timedelta(days=7)
