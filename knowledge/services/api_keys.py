"""API keys for private namespaces: shown once at creation, stored only as a SHA-256 digest."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.db import transaction
from django.utils import timezone

from knowledge.models import ApiKey, Namespace
from knowledge.services.audit import audit_record

KEY_PREFIX = "egk_"


def api_key_digest(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


@transaction.atomic
def api_key_create(*, namespace: Namespace, name: str, actor: Any) -> tuple[ApiKey, str]:
    """Create a key; returns it with the raw secret, which is never stored and never shown again."""
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        namespace=namespace,
        name=name,
        lookup=raw[: len(KEY_PREFIX) + 8],
        digest=api_key_digest(raw),
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
    )
    audit_record(namespace=namespace, actor=actor, action="api-key-create", note=f"{name} ({key.lookup}…)")
    return key, raw


@transaction.atomic
def api_key_revoke(*, key: ApiKey, actor: Any) -> ApiKey:
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(namespace=key.namespace, actor=actor, action="api-key-revoke", note=f"{key.name} ({key.lookup}…)")
    return key
