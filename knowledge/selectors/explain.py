"""Explanations from the database side: IDs not in a release, and the agent preview's "how agents find it"
and "with paths … an agent gets …"."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from knowledge.models import Entry, Namespace
from knowledge.retrieval.explain import explain_context
from knowledge.retrieval.paths import paths_normalize
from knowledge.retrieval.payload import ContextQuery, context_pack
from knowledge.retrieval.snapshot import EntryRecord
from knowledge.selectors.pinned import release_load


def entries_not_released(*, namespace_id: int, ids: Iterable[str], released: Iterable[str]) -> frozenset[str]:
    """IDs of live (not retired) entries of the namespace that the release does not serve."""
    wanted = set(ids) - set(released)
    if not wanted:
        return frozenset()
    rows = Entry.objects.filter(namespace_id=namespace_id, public_id__in=wanted, retired_at__isnull=True)
    return frozenset(rows.values_list("public_id", flat=True))


def entry_found_for(*, namespace: Namespace, topic: str, entry_id: str) -> dict[str, Any] | None:
    """Why the serving release does or does not pack `entry_id` for `topic` (None before the first release):
    what reviewers see in the agent preview, the same explanation as /api/context?explain=1&why=…"""
    release = namespace.active_release
    if release is None:
        return None
    loaded = release_load(release)
    query = ContextQuery(topic=topic, budget=namespace.default_budget, category=None)
    ranking, pack = context_pack(index=loaded.index, view=loaded.view, query=query)
    explained = explain_context(
        index=loaded.index,
        view=loaded.view,
        query=query,
        ranking=ranking,
        pack=pack,
        asked=[entry_id],
        retired={stone.id: stone.replaced_by for stone in loaded.snapshot.tombstones},
        unpublished=frozenset() if loaded.entry(entry_id) else frozenset({entry_id}),
    )
    found: dict[str, Any] = explained["entries"][0]
    return {**found, "releaseId": loaded.stamp.sequence, "topic": topic, "matching": explained["matching"]}


@dataclass(frozen=True, slots=True)
class PathsAnswer:
    """What the serving release packs for some paths and no topic, in pack order (own layer first)."""

    release_id: int
    paths: tuple[str, ...]
    entries: tuple[EntryRecord, ...]


def paths_answer(*, namespace: Namespace, paths: Iterable[str]) -> PathsAnswer | None:
    """The agent preview's "with paths src/api/x.py an agent gets …" (issue 16 §2, §4): exactly what
    /api/context?paths=… answers from the serving release (None before the first release)."""
    release = namespace.active_release
    if release is None:
        return None
    loaded = release_load(release)
    query = ContextQuery(topic="", budget=namespace.default_budget, category=None, paths=paths_normalize(paths))
    _, pack = context_pack(index=loaded.index, view=loaded.view, query=query)
    entries = tuple(loaded.view.entries[hit.position] for hit in pack.packed)
    return PathsAnswer(release_id=loaded.stamp.sequence, paths=query.paths, entries=entries)
