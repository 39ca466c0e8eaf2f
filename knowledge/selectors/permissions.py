"""Who may do what in which namespace: roles per namespace, read once per person."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from knowledge.actors import actor_user
from knowledge.models import Membership, Namespace, Role

# Request users (authenticated or anonymous) and model instances alike.
User = Any

# A namespace admin may do everything an editor or reviewer may.
IMPLIED_ROLES: dict[str, frozenset[str]] = {
    Role.EDITOR: frozenset({Role.EDITOR, Role.ADMIN}),
    Role.REVIEWER: frozenset({Role.REVIEWER, Role.ADMIN}),
    Role.ADMIN: frozenset({Role.ADMIN}),
}
# The roles a membership row grants, implied ones included.
GRANTED_ROLES: dict[str, frozenset[str]] = {
    held: frozenset(role for role, holders in IMPLIED_ROLES.items() if held in holders) for held in Role.values
}
# How refusals name a role ("You are not an editor of …"); None is any role.
ROLE_PHRASES: dict[str | None, str] = {
    Role.EDITOR: "an editor",
    Role.REVIEWER: "a reviewer",
    Role.ADMIN: "a namespace admin",
    None: "a member",
}


@dataclass(frozen=True)
class NamespaceRoles:
    """The roles one person holds, per namespace id, implied roles expanded.

    Built from one query, so an admin page asks "may they?" as often as it likes for free.
    `role=None` means "any role": a member of the namespace.
    """

    is_superuser: bool = False
    by_namespace: Mapping[int, frozenset[str]] = field(default_factory=dict)

    def has(self, namespace_id: int | None, role: str | None = None) -> bool:
        if self.is_superuser:
            return True
        held = self.by_namespace.get(namespace_id or 0, frozenset())
        return bool(held) if role is None else role in held

    def namespace_ids(self, role: str | None = None) -> list[int]:
        """Sorted ids of the namespaces where the person holds the role (not meaningful for superusers)."""
        return sorted(ns for ns, held in self.by_namespace.items() if held and (role is None or role in held))

    def anywhere(self, role: str | None = None) -> bool:
        return self.is_superuser or bool(self.namespace_ids(role))


def roles_from_memberships(rows: Iterable[tuple[int, str]], *, is_superuser: bool = False) -> NamespaceRoles:
    by_namespace: dict[int, frozenset[str]] = {}
    for namespace_id, role in rows:
        by_namespace[namespace_id] = by_namespace.get(namespace_id, frozenset()) | GRANTED_ROLES.get(role, frozenset())
    return NamespaceRoles(is_superuser=is_superuser, by_namespace=by_namespace)


def namespace_roles_get(*, user: User) -> NamespaceRoles:
    """Every role the user holds (one query; none for anonymous or inactive users)."""
    person = actor_user(user)
    if person is None or not person.is_active:
        return NamespaceRoles()
    if user.is_superuser:
        return NamespaceRoles(is_superuser=True)
    rows = Membership.objects.filter(user=user).values_list("namespace_id", "role")
    return roles_from_memberships(rows)


def user_has_role(*, user: User, namespace: Namespace, role: str) -> bool:
    person = actor_user(user)
    if person is None or not person.is_active:
        return False
    if person.is_superuser:
        return True
    return Membership.objects.filter(user=person, namespace=namespace, role__in=IMPLIED_ROLES[role]).exists()


def namespaces_for_user(*, user: User, role: str | None = None) -> QuerySet[Namespace]:
    """The namespaces a user may see in the admin (every one for a superuser)."""
    roles = namespace_roles_get(user=user)
    if roles.is_superuser:
        return Namespace.objects.all()
    return Namespace.objects.filter(pk__in=roles.namespace_ids(role))
