"""Overlays (issue 16 §1): declaring base namespaces, and rebuilding the namespaces built on a base.

A namespace's admin declares its bases in priority order. Refused: a cycle (A on B on A), a public
namespace on a private base (private knowledge would leak into public files), a base whose ID
prefix another layer uses (an ID must name one entry), and a private base its declarer cannot read
(only a member of a private namespace may hand its entries to another one). Every change is audited
and queues a build; when a base's release changes, its dependants' builds are queued (coalesced,
through Celery, like every build).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import InvalidInputError
from knowledge.models import Namespace, Role
from knowledge.models.layers import NamespaceBase
from knowledge.selectors.layers import bases_list, dependants_list, layer_graph
from knowledge.selectors.permissions import user_has_role
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build

BASES_MAX: Final = 8
LAYER_CYCLE: Final = "{namespace} cannot build on {base}: {base} already builds on {namespace} ({path})."
LAYER_SELF: Final = "A namespace cannot build on itself."
LAYER_PRIVATE: Final = (
    "The public namespace {namespace} cannot build on the private namespace {base}: its entries would be public."
)
LAYER_PREFIX: Final = "{base} uses the ID prefix {prefix}, as {other} does: every ID must name one entry."
LAYER_NOT_MEMBER: Final = "{base} is private: only its members may let another namespace build on it."
LAYER_TOO_MANY: Final = f"A namespace builds on at most {BASES_MAX} bases."
LAYER_TWICE: Final = "{base} is listed twice."
PRIVATE_WITH_PUBLIC_DEPENDANTS: Final = (
    "{namespace} cannot become private while public namespaces build on it: {dependants}."
)
PUBLIC_ON_PRIVATE: Final = "{namespace} cannot become public while it builds on private namespaces: {bases}."


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


def _check(namespace: Namespace, bases: Sequence[Namespace], actor: Actor) -> None:
    if len(bases) > BASES_MAX:
        raise InvalidInputError(LAYER_TOO_MANY)
    graph = layer_graph()
    prefixes = {namespace.prefix: namespace.slug}
    seen: set[int] = set()
    for base in bases:
        if base.pk == namespace.pk:
            raise InvalidInputError(LAYER_SELF)
        if base.pk in seen:
            raise InvalidInputError(LAYER_TWICE.format(base=base.slug))
        seen.add(base.pk)
        if namespace.is_public and not base.is_public:
            raise InvalidInputError(LAYER_PRIVATE.format(namespace=namespace.slug, base=base.slug))
        if not base.is_public and not user_has_role(user=actor, namespace=base, role=Role.EDITOR):
            raise InvalidInputError(LAYER_NOT_MEMBER.format(base=base.slug))
        if base.prefix in prefixes:
            raise InvalidInputError(
                LAYER_PREFIX.format(base=base.slug, prefix=base.prefix, other=prefixes[base.prefix])
            )
        prefixes[base.prefix] = base.slug
        cycle = _path(graph, base.pk, namespace.pk)
        if cycle is not None:
            slugs = dict(Namespace.objects.filter(pk__in=cycle).values_list("pk", "slug"))
            chain = " → ".join(slugs[pk] for pk in cycle)
            raise InvalidInputError(LAYER_CYCLE.format(namespace=namespace.slug, base=base.slug, path=chain))


@transaction.atomic
def namespace_bases_set(*, namespace: Namespace, bases: Sequence[Namespace], actor: Actor) -> list[Namespace]:
    """Declare the namespace's bases in priority order (replacing the previous list); audited, builds queued."""
    require_role(user=actor, namespace=namespace, role=Role.ADMIN)
    locked = Namespace.objects.select_for_update().get(pk=namespace.pk)
    before = [base.slug for base in bases_list(namespace=locked)]
    after = [base.slug for base in bases]
    if before == after:
        return list(bases)
    _check(locked, bases, actor)
    NamespaceBase.objects.filter(namespace=locked).delete()
    NamespaceBase.objects.bulk_create(
        NamespaceBase(namespace=locked, base=base, position=position) for position, base in enumerate(bases)
    )
    audit_record(
        namespace=locked,
        actor=actor,
        action="namespace-bases",
        field="bases",
        old_value=before,
        new_value=after,
        note=f"bases: {', '.join(before) or '(none)'} → {', '.join(after) or '(none)'}",
    )
    release_request_build(namespace=locked, reason="bases")
    return list(bases)


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
