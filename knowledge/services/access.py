"""The permission check every write starts with, and the one way services refuse a person.

Every refusal of a write for who the person is (a missing role, four eyes, granting oneself a role,
leaving a namespace without a reviewer) is also a `permission_denied` security event, whichever
path called the service (admin, bulk action, command, API).
"""

from __future__ import annotations

from typing import Any

from knowledge.actors import Actor, actor_id
from knowledge.errors import NOT_A_MEMBER, NotAllowedError
from knowledge.models import Namespace
from knowledge.security_events import PERMISSION_DENIED, security_event
from knowledge.selectors.permissions import ROLE_PHRASES, user_has_role


def refusal(
    message: str, *, reason: str, actor: Actor, namespace: Namespace | None = None, **fields: Any
) -> NotAllowedError:
    """A NotAllowedError to raise, after logging the refusal as a security event (`reason` is a stable code)."""
    security_event(
        PERMISSION_DENIED,
        namespace=namespace.slug if namespace is not None else None,
        reason=reason,
        user_id=actor_id(actor),
        source="service",
        **fields,
    )
    return NotAllowedError(message)


def require_role(*, user: Actor, namespace: Namespace, role: str) -> None:
    """Raise NotAllowedError unless the user holds the role (or one implying it) in the namespace."""
    if not user_has_role(user=user, namespace=namespace, role=role):
        message = NOT_A_MEMBER.format(role=ROLE_PHRASES[role], namespace=namespace.slug)
        raise refusal(message, reason="missing_role", actor=user, namespace=namespace, role=role)
