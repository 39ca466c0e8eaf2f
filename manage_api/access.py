"""The namespace a management request addresses, and the roles the request may use there.

A namespace is addressed like every other route: by host name (or the default namespace) at
/api/manage/, or by slug under /t/<namespace>/api/manage/. A person sees only namespaces where they
hold a role; a token sees only the namespaces it names, with at most the roles of its scope. Every
other namespace answers 404, exactly like one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rest_framework import exceptions
from rest_framework.request import Request

from gateway.gate import namespace_lookup
from knowledge.models import Namespace, PersonalToken
from knowledge.selectors.permissions import ROLE_PHRASES, namespace_roles_get
from knowledge.selectors.tokens import SCOPE_ROLES, token_namespace_ids

ACCESS_ATTRIBUTE = "_evergreen_manage_access"
NO_NAMESPACE = "No such namespace here, or you hold no role in it (or your token does not name it)."
MISSING_ROLE = "You need to be {role} of “{namespace}” to do this."
SCOPE_TOO_NARROW = "Your token's scope ({scope}) does not allow this: it needs {role} of “{namespace}”."


@dataclass(frozen=True, slots=True)
class Access:
    """What this request may do in its namespace: the owner's roles there, cut to the token's scope."""

    namespace: Namespace
    roles: frozenset[str]  # roles usable by this request (implied ones expanded)
    held: frozenset[str]  # roles the person holds, whatever the token's scope
    token: PersonalToken | None

    def require(self, role: str | None) -> None:
        """Raise 403 naming the missing role (None: reading, which any member may)."""
        if role is None or role in self.roles:
            return
        phrase = ROLE_PHRASES[role]
        if role in self.held and self.token is not None:
            raise exceptions.PermissionDenied(
                SCOPE_TOO_NARROW.format(scope=self.token.scope, role=phrase, namespace=self.namespace.slug),
                code="token_scope",
            )
        raise exceptions.PermissionDenied(MISSING_ROLE.format(role=phrase, namespace=self.namespace.slug))


def _namespace(request: Request, slug: str | None) -> Namespace | None:
    """By slug under /t/<slug>/, else the host's namespace (or the default) as the read routes resolve it."""
    if slug is None:
        _, state = namespace_lookup(request._request, None)
        if state is None:
            return None
        slug = state.slug
    return Namespace.objects.filter(slug=slug).first()


def request_access(request: Request, slug: str | None) -> Access:
    """The request's Access (computed once), or 401 without credentials, 404 for an invisible namespace."""
    cached: Access | None = getattr(request, ACCESS_ATTRIBUTE, None)
    if cached is not None:
        return cached
    user: Any = request.user
    if user is None or not user.is_authenticated:
        raise exceptions.NotAuthenticated(
            "Sign in: send a personal API token (make one at /admin/tokens/) as Authorization: Bearer egp_…, or use "
            "the admin's session."
        )
    token = request.auth if isinstance(request.auth, PersonalToken) else None
    namespace = _namespace(request, slug)
    if namespace is None:
        raise exceptions.NotFound(NO_NAMESPACE)
    roles = namespace_roles_get(user=user)
    if not roles.has(namespace.pk):
        raise exceptions.NotFound(NO_NAMESPACE)
    held = (
        frozenset({"editor", "reviewer", "admin"})
        if roles.is_superuser
        else frozenset(roles.by_namespace.get(namespace.pk, frozenset()))
    )
    usable = held
    if token is not None:
        if namespace.pk not in token_namespace_ids(token=token):
            raise exceptions.NotFound(NO_NAMESPACE)
        usable = held & SCOPE_ROLES[token.scope]
    access = Access(namespace=namespace, roles=usable, held=held, token=token)
    setattr(request, ACCESS_ATTRIBUTE, access)
    return access
