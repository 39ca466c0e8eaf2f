"""Personal API tokens: a person makes their own, for namespaces where they hold a role; shown once, stored hashed."""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any, Final

from django.db import transaction
from django.utils import timezone

from knowledge.errors import InvalidInputError, NotAllowedError
from knowledge.models import Namespace, PersonalToken, TokenScope
from knowledge.models.namespace import api_key_digest
from knowledge.selectors.permissions import namespace_roles_get
from knowledge.services.audit import audit_record

TOKEN_PREFIX: Final = "egp_"  # noqa: S105 - the visible prefix, not a secret
LOOKUP_LENGTH: Final = len(TOKEN_PREFIX) + 8
# last_used_at is written at most this often per token, so a busy script does not write on every request.
LAST_USED_RESOLUTION: Final = timedelta(minutes=1)

NO_NAMESPACES: Final = "Name at least one namespace the token may act in."
NOT_YOURS: Final = "You hold no role in {namespaces}; a token can only act where its owner can."
EXPIRED_ALREADY: Final = "The expiry must lie in the future."
SCOPE_UNKNOWN: Final = "The scope must be one of: {scopes}."
ONLY_OWNER: Final = "Only the token's owner (or a superuser) can revoke it."


@transaction.atomic
def personal_token_create(
    *,
    user: Any,
    name: str,
    namespaces: Iterable[Namespace],
    scope: str,
    expires_at: datetime | None,
) -> tuple[PersonalToken, str]:
    """Create a token for `user`; returns it with the raw secret, which is never stored nor shown again."""
    chosen = sorted(set(namespaces), key=lambda ns: ns.slug)
    if not chosen:
        raise InvalidInputError(NO_NAMESPACES)
    if scope not in TokenScope.values:
        raise InvalidInputError(SCOPE_UNKNOWN.format(scopes=", ".join(TokenScope.values)))
    if expires_at is not None and expires_at <= timezone.now():
        raise InvalidInputError(EXPIRED_ALREADY)
    roles = namespace_roles_get(user=user)
    outside = [ns.slug for ns in chosen if not roles.has(ns.pk)]
    if outside:
        raise NotAllowedError(NOT_YOURS.format(namespaces=", ".join(outside)))
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = PersonalToken.objects.create(
        user=user,
        name=name.strip(),
        scope=scope,
        lookup=raw[:LOOKUP_LENGTH],
        digest=api_key_digest(raw),
        expires_at=expires_at,
    )
    token.namespaces.set(chosen)
    for namespace in chosen:
        audit_record(
            namespace=namespace,
            actor=user,
            action="token-create",
            note=f"{token.name} ({token.lookup}…), scope {scope}, expires {expires_at or 'never'}",
        )
    return token, raw


@transaction.atomic
def personal_token_revoke(*, token: PersonalToken, actor: Any) -> PersonalToken:
    """Revoke a token for good: the next request with it is refused."""
    token = PersonalToken.objects.select_for_update().get(pk=token.pk)
    if token.user_id != getattr(actor, "pk", None) and not getattr(actor, "is_superuser", False):
        raise NotAllowedError(ONLY_OWNER)
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        for namespace in token.namespaces.all():
            audit_record(
                namespace=namespace, actor=actor, action="token-revoke", note=f"{token.name} ({token.lookup}…)"
            )
    return token


def personal_token_used(*, token: PersonalToken, now: datetime | None = None) -> None:
    """Record that the token was just used (at most once per LAST_USED_RESOLUTION, one UPDATE)."""
    now = now or timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    PersonalToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now
