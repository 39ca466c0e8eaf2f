"""The requesting user's roles, read once per request, and the words for a refusal."""

from __future__ import annotations

from django.http import HttpRequest

from knowledge.errors import NOT_A_MEMBER
from knowledge.models import Namespace
from knowledge.selectors.permissions import ROLE_PHRASES, NamespaceRoles, namespace_roles_get

ROLES_ATTRIBUTE = "_evergreen_roles"
# (namespace id, role) of the last permission question answered "no", for the 403 page.
DENIAL_ATTRIBUTE = "_evergreen_denial"


def request_roles(request: HttpRequest) -> NamespaceRoles:
    """The user's roles, read once per request however many permission questions a page asks."""
    roles = getattr(request, ROLES_ATTRIBUTE, None)
    if roles is None:
        roles = namespace_roles_get(user=request.user)
        setattr(request, ROLES_ATTRIBUTE, roles)
    return roles


def role_label(role: str | None) -> str:
    """ "an editor", "a reviewer", "a namespace admin", or "a member" for any role."""
    return ROLE_PHRASES[role]


def refusal(namespace: Namespace | int, role: str | None) -> str:
    """The refusal naming role and namespace (only ever said of namespaces the user can see)."""
    slug = namespace.slug if isinstance(namespace, Namespace) else Namespace.objects.get(pk=namespace).slug
    return NOT_A_MEMBER.format(role=role_label(role), namespace=slug)
