"""Reading personal tokens: find one by its secret, and what it lets its owner do where."""

from __future__ import annotations

from typing import Final

from django.utils import timezone

from knowledge.models import PersonalToken, TokenScope
from knowledge.models.namespace import api_key_digest
from knowledge.selectors.permissions import GRANTED_ROLES

# Why a token opens nothing (for the security log): status words, not secrets.
STATUS_VALID: Final = "valid"
STATUS_UNKNOWN: Final = "unknown_token"
STATUS_REVOKED: Final = "revoked_token"
STATUS_EXPIRED: Final = "expired_token"
STATUS_INACTIVE_USER: Final = "inactive_user"

# The roles a scope lets a token use; a token never gains a role its owner does not hold.
SCOPE_ROLES: Final[dict[str, frozenset[str]]] = {
    TokenScope.READ: frozenset(),
    TokenScope.EDITOR: GRANTED_ROLES["editor"],
    TokenScope.REVIEWER: GRANTED_ROLES["reviewer"],
    TokenScope.ADMIN: GRANTED_ROLES["admin"],
}


def personal_token_find(*, raw: str) -> tuple[PersonalToken | None, str]:
    """(the token, "valid") or (the token or None, why it does not open anything)."""
    token = PersonalToken.objects.select_related("user").filter(digest=api_key_digest(raw)).first() if raw else None
    if token is None:
        return None, STATUS_UNKNOWN
    if token.revoked_at is not None:
        return token, STATUS_REVOKED
    if token.expires_at is not None and token.expires_at <= timezone.now():
        return token, STATUS_EXPIRED
    if not token.user.is_active:
        return token, STATUS_INACTIVE_USER
    return token, STATUS_VALID


def token_namespace_ids(*, token: PersonalToken) -> frozenset[int]:
    return frozenset(token.namespaces.values_list("pk", flat=True))
