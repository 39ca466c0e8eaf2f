"""Who may do what in which namespace."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from knowledge.models import Membership, Namespace, Role

# Request users (authenticated or anonymous) and model instances alike.
User = Any

# A namespace admin may do everything an editor or reviewer may.
IMPLIED_ROLES: dict[str, frozenset[str]] = {
    Role.EDITOR: frozenset({Role.EDITOR, Role.ADMIN}),
    Role.REVIEWER: frozenset({Role.REVIEWER, Role.ADMIN}),
    Role.ADMIN: frozenset({Role.ADMIN}),
}


def user_has_role(*, user: User, namespace: Namespace, role: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if getattr(user, "is_superuser", False):
        return True
    return Membership.objects.filter(user=user, namespace=namespace, role__in=IMPLIED_ROLES[role]).exists()


def namespaces_for_user(*, user: User, role: str | None = None) -> QuerySet[Namespace]:
    """The namespaces a user may see in the admin (every one for a superuser)."""
    if getattr(user, "is_superuser", False):
        return Namespace.objects.all()
    if not user.is_authenticated:
        return Namespace.objects.none()
    memberships = Membership.objects.filter(user=user)
    if role is not None:
        memberships = memberships.filter(role__in=IMPLIED_ROLES[role])
    return Namespace.objects.filter(pk__in=memberships.values("namespace_id"))
