"""The permission check every write starts with."""

from __future__ import annotations

from typing import Any

from knowledge.errors import NOT_A_MEMBER, NotAllowedError
from knowledge.models import Namespace
from knowledge.selectors.permissions import ROLE_PHRASES, user_has_role


def require_role(*, user: Any, namespace: Namespace, role: str) -> None:
    """Raise NotAllowedError unless the user holds the role (or one implying it) in the namespace."""
    if not user_has_role(user=user, namespace=namespace, role=role):
        raise NotAllowedError(NOT_A_MEMBER.format(role=ROLE_PHRASES[role], namespace=namespace.slug))
