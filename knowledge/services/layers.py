"""Overlays (issue 16 §1, §4): checking and applying a namespace's reviewed list of bases, and rebuilding
the namespaces built on a base.

A namespace's bases are a reviewed text (knowledge.services.texts, kind "bases"): an editor proposes
the list, another person approves it, and publishing it writes the NamespaceBase rows the next
release reads. The list is checked when it is proposed, approved and published, since the other
namespaces and their members may change in between. Refused: a cycle (A on B on A, naming the chain),
a public namespace on a private base (private knowledge would leak into public files), a base whose
ID prefix another layer uses (an ID must name one entry), and a private base one of the people who
wrote the list cannot read (only a member of a private namespace may hand its entries to another
one). Likewise a public base's internal and restricted entries reach the namespace only when every
writer is an editor of the base. When a base's release changes, its dependants' builds are queued
(coalesced, through Celery).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from django.db import connection

from knowledge.actors import Actor, is_system_actor
from knowledge.errors import InvalidInputError
from knowledge.models import Namespace, Role
from knowledge.models.layers import NamespaceBase
from knowledge.selectors.layers import bases_list, dependants_list, layer_graph
from knowledge.selectors.permissions import user_has_role
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build

BASES_MAX: Final = 8
LAYER_GRAPH_LOCK: Final = 0x45_47_4C_59  # "EGLY": the advisory lock every write of base links takes
LAYER_CYCLE: Final = "{namespace} cannot build on {base}: {base} already builds on {namespace} ({path})."
LAYER_SELF: Final = "A namespace cannot build on itself."
LAYER_PRIVATE: Final = (
    "The public namespace {namespace} cannot build on the private namespace {base}: its entries would be public."
)
LAYER_PREFIX: Final = "{base} uses the ID prefix {prefix}, as {other} does: every ID must name one entry."
# A private base some writer of the list cannot read is refused as if it did not exist, so that an
# editor cannot learn which private namespaces exist by naming them.
LAYER_UNKNOWN: Final = "No namespace {slugs} that every writer of this list can read."
LAYER_TOO_MANY: Final = f"A namespace builds on at most {BASES_MAX} bases."
LAYER_TWICE: Final = "{base} is listed twice."
PRIVATE_WITH_PUBLIC_DEPENDANTS: Final = (
    "{namespace} cannot become private while public namespaces build on it: {dependants}."
)
PUBLIC_ON_PRIVATE: Final = "{namespace} cannot become public while it builds on private namespaces: {bases}."


class LayerError(InvalidInputError):
    """A list of bases that cannot be declared; `code` (layers.cycle, layers.private_base …) names the rule."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


def _path(graph: dict[int, list[int]], start: int, goal: int) -> list[int] | None:
    """A chain of base links from `start` to `goal` (depth first), or None."""
    stack = [(start, [start])]
    seen = set()
    while stack:
        node, path = stack.pop()
        if node == goal:
            return path
        if node in seen:
            continue
        seen.add(node)
        stack.extend((nxt, [*path, nxt]) for nxt in graph.get(node, ()))
    return None


def _writers(declarers: Iterable[Actor]) -> list[Actor]:
    """The people among the list's writers: the system actor (set-up from files) is nobody's member and passes."""
    return [person for person in declarers if not is_system_actor(person)]


def _can_hand_over(people: Sequence[Actor], base: Namespace) -> bool:
    """Whether every writer may hand the base's entries to another namespace: an editor of the base each."""
    return all(user_has_role(user=person, namespace=base, role=Role.EDITOR) for person in people)


def _check(namespace: Namespace, bases: Sequence[Namespace], declarers: Iterable[Actor]) -> None:
    if len(bases) > BASES_MAX:
        raise LayerError(LAYER_TOO_MANY, code="layers.too_many")
    people = _writers(declarers)
    graph = layer_graph()
    prefixes = {namespace.prefix: namespace.slug}
    seen: set[int] = set()
    for base in bases:
        if base.pk == namespace.pk:
            raise LayerError(LAYER_SELF, code="layers.self")
        if base.pk in seen:
            raise LayerError(LAYER_TWICE.format(base=base.slug), code="layers.twice")
        seen.add(base.pk)
        if not base.is_public and not _can_hand_over(people, base):
            raise LayerError(LAYER_UNKNOWN.format(slugs=base.slug), code="layers.unknown_namespace")
        if namespace.is_public and not base.is_public:
            raise LayerError(LAYER_PRIVATE.format(namespace=namespace.slug, base=base.slug), code="layers.private_base")
        if base.prefix in prefixes:
            message = LAYER_PREFIX.format(base=base.slug, prefix=base.prefix, other=prefixes[base.prefix])
            raise LayerError(message, code="layers.prefix")
        prefixes[base.prefix] = base.slug
        cycle = _path(graph, base.pk, namespace.pk)
        if cycle is not None:
            slugs = dict(Namespace.objects.filter(pk__in=cycle).values_list("pk", "slug"))
            chain = " → ".join(slugs[pk] for pk in cycle)
            message = LAYER_CYCLE.format(namespace=namespace.slug, base=base.slug, path=chain)
            raise LayerError(message, code="layers.cycle")


def _resolve(slugs: Sequence[str]) -> list[Namespace]:
    found = {namespace.slug: namespace for namespace in Namespace.objects.filter(slug__in=slugs)}
    unknown = [slug for slug in slugs if slug not in found]
    if unknown:
        raise LayerError(LAYER_UNKNOWN.format(slugs=", ".join(unknown)), code="layers.unknown_namespace")
    return [found[slug] for slug in slugs]


def layers_declaration_check(
    *, namespace: Namespace, slugs: Sequence[str], declarers: Iterable[Actor]
) -> list[Namespace]:
    """The bases `slugs` name, in order, or InvalidInputError saying why the list cannot be declared.

    `declarers` are the people who wrote the list (the saver of a draft, every contributor of a
    version): each must be a member of every private base in it; the system actor (set-up from
    files) is nobody's member and passes.
    """
    bases = _resolve(slugs)
    _check(namespace, bases, declarers)
    return bases


def _graph_lock() -> None:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LAYER_GRAPH_LOCK])


def layers_declaration_apply(
    *, namespace: Namespace, slugs: Sequence[str], declarers: Iterable[Actor], actor: Actor
) -> list[Namespace]:
    """Write a published list of bases (knowledge.services.texts is the only caller); audited.

    Lists are written one at a time (a transaction-scoped advisory lock): two lists published at once
    could otherwise close a cycle through four namespaces no row lock shares, each checked against a
    graph without the other. The namespace and its bases are locked too (in id order), so a
    visibility change waits for the check. The caller queues the build.

    A base's internal and restricted entries are handed over only when every writer is an editor of
    that base (as a private base requires of them all); otherwise the namespace gets what the base
    serves publicly, so that no one can read another tenant's internal entries with their own
    namespace's keys by declaring its public namespace a base.
    """
    _graph_lock()
    bases = _resolve(slugs)
    ids = {namespace.pk, *(base.pk for base in bases)}
    locked = {row.pk: row for row in Namespace.objects.select_for_update().filter(pk__in=ids).order_by("pk")}
    namespace = locked[namespace.pk]
    bases = [locked[base.pk] for base in bases]
    _check(namespace, bases, declarers)
    before = [base.slug for base in bases_list(namespace=namespace)]
    NamespaceBase.objects.filter(namespace=namespace).delete()
    people = _writers(declarers)
    NamespaceBase.objects.bulk_create(
        NamespaceBase(namespace=namespace, base=base, position=position, shares_protected=_can_hand_over(people, base))
        for position, base in enumerate(bases)
    )
    audit_record(
        namespace=namespace,
        actor=actor,
        action="namespace-bases",
        field="bases",
        old_value=before,
        new_value=list(slugs),
        note=f"bases: {', '.join(before) or '(none)'} → {', '.join(slugs) or '(none)'}",
    )
    return bases


def layers_privacy_check(*, namespace: Namespace, is_public: bool) -> None:
    """Refuse a visibility change that would put a private layer under a public one."""
    if not is_public:
        public = [d.slug for d in dependants_list(namespace=namespace) if d.is_public]
        if public:
            raise InvalidInputError(
                PRIVATE_WITH_PUBLIC_DEPENDANTS.format(namespace=namespace.slug, dependants=", ".join(public))
            )
    else:
        private = [b.slug for b in bases_list(namespace=namespace) if not b.is_public]
        if private:
            raise InvalidInputError(PUBLIC_ON_PRIVATE.format(namespace=namespace.slug, bases=", ".join(private)))


def layers_rebuild_dependants(*, namespace_id: int) -> int:
    """Queue a build of every namespace built on this one (after its release changed); how many.

    Each queued build coalesces with others of the same namespace (knowledge.services.releases); a
    dependant's new release queues its own dependants in turn, so a change travels up every layer.
    """
    dependants = dependants_list(namespace=Namespace(pk=namespace_id))
    for dependant in dependants:
        release_request_build(namespace=dependant, reason="base-release")
    return len(dependants)
