"""Read a namespace's bases for its release build (issue 16 §1): each base as its active release serves it."""

from __future__ import annotations

from typing import Any

from knowledge.actors import is_system_actor
from knowledge.models import Namespace, ReviewedText, Role, TextKind, TextVersion
from knowledge.models.layers import NamespaceBase, WithdrawnEntry
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.layers import Base, Withdrawn
from knowledge.retrieval.render.release import CONTEXT_JSON, SITE_JSON
from knowledge.retrieval.render.site import snapshot_complete, snapshot_from_artifacts
from knowledge.retrieval.tiers import PROTECTED_JSON
from knowledge.retrieval.timestamps import rfc3339
from knowledge.selectors.artifacts import artifact_contents
from knowledge.selectors.permissions import user_has_role


def base_links_list(*, namespace: Namespace) -> list[NamespaceBase]:
    """The namespace's links to its bases (each with its base), in priority order."""
    return list(NamespaceBase.objects.filter(namespace=namespace).select_related("base").order_by("position"))


def bases_list(*, namespace: Namespace) -> list[Namespace]:
    """The namespace's declared bases, in priority order."""
    return [link.base for link in base_links_list(namespace=namespace)]


def layers_below(*, namespace: Namespace) -> list[Namespace]:
    """Every namespace this one builds on, directly or through a base, nearest first (each once)."""
    found: list[Namespace] = []
    queue = bases_list(namespace=namespace)
    while queue:
        base = queue.pop(0)
        if base.pk != namespace.pk and all(base.pk != seen.pk for seen in found):
            found.append(base)
            queue += bases_list(namespace=base)
    return found


def layer_slugs(*, namespace: Namespace) -> set[str]:
    """The namespace's slug and those of every namespace it builds on now (its layers, declared)."""
    return {namespace.slug, *(base.slug for base in layers_below(namespace=namespace))}


def withdrawn_list(*, namespace: Namespace) -> list[Withdrawn]:
    """The IDs the namespace served from a layer that later left its bases (knowledge.models.WithdrawnEntry)."""
    rows = WithdrawnEntry.objects.filter(namespace=namespace).order_by("public_id")
    return [
        Withdrawn(
            id=row.public_id,
            layer=row.layer,
            title=row.title,
            sensitivity=row.sensitivity,
            withdrawn_at=rfc3339(row.withdrawn_at),
        )
        for row in rows
    ]


def dependants_list(*, namespace: Namespace) -> list[Namespace]:
    """The namespaces that declare this one as a base (directly)."""
    return list(Namespace.objects.filter(base_links__base=namespace).order_by("slug"))


def list_writers(*, namespace: Namespace) -> list[Any]:
    """The people who wrote the namespace's published list of bases (its author and every saver); none
    for a list set up from files (the system actor's)."""
    text = ReviewedText.objects.filter(namespace=namespace, kind=TextKind.BASES).select_related("live_version").first()
    version = text.live_version if text is not None else None
    if version is None:
        return []
    return [person for person in version_writers(version) if not is_system_actor(person)]


def version_writers(version: TextVersion) -> list[Any]:
    """The people who wrote a text version's content: its author and every saver."""
    people: list[Any] = list(version.contributors.all())
    if version.author_id is not None and all(person.pk != version.author_id for person in people):
        people.append(version.author)
    return people


def _still_editors(writers: list[Any], base: Namespace) -> bool:
    return all(user_has_role(user=person, namespace=base, role=Role.EDITOR) for person in writers)


def entry_layer_source(*, namespace_id: int, layer: str | None, clearance: str) -> tuple[int, str] | None:
    """Where a served entry's earlier versions live, and the clearance they are read with: the namespace
    itself for its own entries; for one that came from a base (`layer`: the base's slug), the base, read
    at the caller's clearance only over a link that hands its non-public entries over (layers_read)."""
    if not layer:  # a namespace without bases: no query
        return namespace_id, clearance
    own = Namespace.objects.filter(pk=namespace_id).only("pk", "slug").first()
    if own is None or layer == own.slug:
        return namespace_id, clearance
    link = NamespaceBase.objects.filter(namespace=own, base__slug=layer).select_related("base").first()
    if link is None:  # a base's base: its own entries reach this namespace as that base serves them publicly
        base_id = Namespace.objects.filter(slug=layer).values_list("pk", flat=True).first()
        return None if base_id is None else (base_id, PUBLIC)
    shares = link.shares_protected and _still_editors(list_writers(namespace=own), link.base)
    return link.base_id, clearance if shares else PUBLIC


def layers_read(*, namespace: Namespace) -> list[Base]:
    """The bases' published entries and tombstones, from each base's active release (what it serves).

    A base without a release adds nothing yet; a private base under a public namespace (which the
    services refuse to declare, but a base may turn private later) adds nothing: its text never
    reaches a public namespace's files. A base's internal and restricted entries come only over a
    link that shares them (NamespaceBase.shares_protected) while every writer of the list is still an
    editor of the base (checked at every build: a membership lost after the list was published stops
    them); otherwise what it serves publicly, and a private base then adds nothing at all.
    """
    found: list[Base] = []
    writers = list_writers(namespace=namespace)
    for link in base_links_list(namespace=namespace):
        base = link.base
        if base.active_release_id is None or (namespace.is_public and not base.is_public):
            continue
        entitled = _still_editors(writers, base)
        if not base.is_public and not entitled:
            continue
        shares = link.shares_protected and entitled
        names = (CONTEXT_JSON, SITE_JSON, *([PROTECTED_JSON] if shares else []))
        files = dict(artifact_contents(release_id=base.active_release_id, names=names))
        snapshot, _ = snapshot_from_artifacts(site_json=files[SITE_JSON], context_json=files[CONTEXT_JSON])
        if PROTECTED_JSON in files:
            snapshot = snapshot_complete(snapshot, files[PROTECTED_JSON])
        found.append(Base(slug=base.slug, snapshot=snapshot))
    return found


def layer_graph() -> dict[int, list[int]]:
    """Every declared base link, as namespace id -> base ids (for the cycle check)."""
    graph: dict[int, list[int]] = {}
    for namespace_id, base_id in NamespaceBase.objects.order_by("namespace_id", "position").values_list(
        "namespace_id", "base_id"
    ):
        graph.setdefault(namespace_id, []).append(base_id)
    return graph
