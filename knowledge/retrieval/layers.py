"""Overlays (issue 16 §1): a namespace's release holds its own entries, then its bases' published entries.

A namespace declares base namespaces in priority order (a company-wide namespace under each product's
one). Its snapshot is its own entries, then each base's served entries in that order, each keeping the
ID its own namespace gave it and saying which layer it came from (``layer``: the namespace's slug).
An own entry that ``overrides`` a base entry replaces it: only the override is served, and the base ID
answers as a tombstone that names the override. A base's retired entries (its tombstones) come along,
so a retirement reaches every namespace built on it with their next release. A base's themes come along
too, as ``<base>/<slug>`` and listing only the base's entries the namespace serves (an overridden one
is left out), so a dependant's llms.txt routes to them like to its own.

An ID a release served from a layer that then left the namespace's bases is withdrawn: it answers as a
tombstone saying so (seed §6 and §8: an ID agents could read is gone, never unknown), in that release and
every later one while the layer stays out; the layer added back serves it again. A base entry the
namespace never served stays unknown (404).

Pure: the bases' snapshots are read from their active releases by ``knowledge.selectors.layers``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from knowledge.retrieval.changes import id_order
from knowledge.retrieval.contract.records import PUBLIC, Tombstone
from knowledge.retrieval.snapshot import CategoryInfo, EntryRecord, Snapshot, ThemeRecord, without_dead_links

OVERRIDDEN = "Overridden in {namespace} by {id}: {title}"
WITHDRAWN = "No longer served in {namespace}: {layer} was removed from its base namespaces"


@dataclass(frozen=True, slots=True)
class Base:
    """One base namespace as its active release serves it (its own bases already folded in)."""

    slug: str
    snapshot: Snapshot


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """An ID the namespace served from `layer` until `layer` left its bases (knowledge.models.WithdrawnEntry)."""

    id: str
    layer: str
    title: str
    sensitivity: str
    withdrawn_at: str  # RFC 3339


def withdrawn_items(
    previous: Iterable[Mapping[str, Any]], snapshot: Snapshot, *, layers: Collection[str]
) -> list[Mapping[str, Any]]:
    """The items of a release's manifest (`previous`, the namespace's last) served from a layer that is not
    among `layers` (the namespace and every namespace below it now) which `snapshot` neither serves nor
    tombstones: the IDs its build withdraws. A base that is still listed but no longer serves an entry (a
    rollback) withdraws nothing: that ID was never the base's to keep (it answers 404 in the base too)."""
    gone = [item for item in previous if "layer" in item and item["layer"] not in layers]
    if not gone:
        return []
    taken = {entry.id for entry in snapshot.entries} | {stone.id for stone in snapshot.tombstones}
    return [item for item in gone if item["id"] not in taken]


def layers_withdrawn(snapshot: Snapshot, withdrawn: Iterable[Withdrawn], *, layers: Collection[str]) -> Snapshot:
    """`snapshot` with a tombstone for each withdrawn ID whose layer is not among `layers` and which it
    neither serves nor tombstones another way (served again, retired or overridden), after its own, in ID order."""
    taken = {entry.id for entry in snapshot.entries} | {stone.id for stone in snapshot.tombstones}
    found = [item for item in withdrawn if item.layer not in layers and item.id not in taken]
    if not found:
        return snapshot
    name = snapshot.namespace.name
    stones = [
        Tombstone(
            id=item.id,
            title=item.title,
            retired_at=item.withdrawn_at,
            reason=WITHDRAWN.format(namespace=name, layer=item.layer),
            replaced_by=None,
            sensitivity=item.sensitivity or PUBLIC,
        )
        for item in sorted(found, key=lambda item: id_order(item.id))
    ]
    return replace(snapshot, tombstones=(*snapshot.tombstones, *stones))


def _layered(entry: EntryRecord, slug: str) -> EntryRecord:
    return entry if entry.layer else replace(entry, layer=slug)


def layers_compose(own: Snapshot, bases: Sequence[Base]) -> Snapshot:
    """The namespace's snapshot with its bases' entries and tombstones, in priority order.

    An ID appears once: the first layer that has it wins (own entries first), so a base listed
    twice through two paths, or an entry a higher base already overrode, is not served twice.
    """
    if not bases:
        return own
    slug = own.namespace.slug
    overrides = {entry.overrides: entry for entry in own.entries if entry.overrides}
    entries: list[EntryRecord] = [_layered(entry, slug) for entry in own.entries]
    stones: list[Tombstone] = list(own.tombstones)
    seen = {entry.id for entry in entries} | {stone.id for stone in stones}
    for base in bases:
        for entry in base.snapshot.entries:
            if entry.id in seen:
                continue
            seen.add(entry.id)
            override = overrides.get(entry.id)
            if override is None:
                entries.append(_layered(entry, base.slug))
            else:
                stones.append(_overridden(entry, override, namespace=own.namespace.name))
        for stone in base.snapshot.tombstones:
            if stone.id not in seen:
                seen.add(stone.id)
                override = overrides.get(stone.id)
                # A retired base entry the namespace overrides still answers with its override here.
                stones.append(stone if override is None else _overridden_stone(stone, override, own.namespace.name))
    categories = _categories(own, bases)
    served = without_dead_links(entries)
    return replace(
        own,
        namespace=replace(own.namespace, categories=categories),
        entries=served,
        tombstones=tuple(stones),
        themes=_themes(own, bases, served_ids={entry.id for entry in served}),
    )


def _overridden(entry: EntryRecord, override: EntryRecord, *, namespace: str) -> Tombstone:
    """The base entry's ID in the overriding namespace: gone, replaced by the override."""
    return Tombstone(
        id=entry.id,
        title=entry.title,
        retired_at=override.approved_at or "1970-01-01T00:00:00Z",
        reason=OVERRIDDEN.format(namespace=namespace, id=override.id, title=override.title),
        replaced_by=override.id,
        sensitivity=entry.sensitivity,
    )


def _overridden_stone(stone: Tombstone, override: EntryRecord, namespace: str) -> Tombstone:
    """A retired base entry's tombstone in the namespace that overrides it: it names the override."""
    reason = OVERRIDDEN.format(namespace=namespace, id=override.id, title=override.title)
    return replace(stone, reason=f"{reason} (retired in its own namespace: {stone.reason})", replaced_by=override.id)


def _themes(own: Snapshot, bases: Sequence[Base], *, served_ids: set[str]) -> tuple[ThemeRecord, ...]:
    """The own themes, then each base's (its own and those it carries), each once and only with entries served.

    A base's theme keeps its title and description, is named ``<layer>/<slug>`` (an own theme's slug
    has no slash, so the two never collide) and lists the entries of it the namespace serves, in the
    base editors' order; one left with none (every entry overridden or retired) is not carried.
    """
    themes = list(own.themes)
    seen = {theme.slug for theme in themes}
    for base in bases:
        for theme in base.snapshot.themes:
            carried = theme if theme.layer else replace(theme, slug=f"{base.slug}/{theme.slug}", layer=base.slug)
            entries = tuple(entry_id for entry_id in theme.entries if entry_id in served_ids)
            if carried.slug in seen or not entries:
                continue
            seen.add(carried.slug)
            themes.append(replace(carried, entries=entries))
    return tuple(themes)


def _categories(own: Snapshot, bases: Sequence[Base]) -> tuple[CategoryInfo, ...]:
    """The own categories, then the bases' categories the own namespace does not have (for ?category=)."""
    found = {category.slug: category for category in own.namespace.categories}
    for base in bases:
        for category in base.snapshot.namespace.categories:
            found.setdefault(category.slug, category)
    return tuple(found.values())
