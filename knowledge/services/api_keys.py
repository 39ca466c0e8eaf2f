"""API keys for private namespaces: made and revoked by the namespace's admins, shown once, stored as a digest."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import InvalidInputError
from knowledge.models import ApiKey, Namespace, Role, Sensitivity
from knowledge.models.namespace import api_key_digest
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record

KEY_PREFIX = "egk_"
CLEARANCE_UNKNOWN = "Unknown clearance {clearance!r}: use public, internal or restricted."


@transaction.atomic
def api_key_create(
    *,
    namespace: Namespace,
    name: str,
    actor: Actor,
    clearance: str = Sensitivity.PUBLIC,
    check_permission: bool = True,
) -> tuple[ApiKey, str]:
    """Create a key; returns it with the raw secret, which is never stored and never shown again.

    ``clearance`` is the most sensitive level of entries the key reads (issue 12 §4); a key's
    clearance never changes (make a new key and revoke the old one).

    Needs the namespace-admin role of the key's namespace (``check_permission=False`` is for set-up
    code that acts without a person, such as tests and the demo).
    """
    if check_permission:
        require_role(user=actor, namespace=namespace, role=Role.ADMIN)
    if clearance not in Sensitivity.values:
        raise InvalidInputError(CLEARANCE_UNKNOWN.format(clearance=clearance))
    raw = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(
        namespace=namespace,
        name=name,
        lookup=raw[: len(KEY_PREFIX) + 8],
        digest=api_key_digest(raw),
        created_by=actor_user(actor),
        clearance=clearance,
    )
    note = f"{name} ({key.lookup}…), clearance {clearance}"
    audit_record(namespace=namespace, actor=actor, action="api-key-create", note=note)
    return key, raw


@transaction.atomic
def api_key_revoke(*, key: ApiKey, actor: Actor, check_permission: bool = True) -> ApiKey:
    """Revoke a key for good (agents using it get "not found" from the next request on)."""
    key = ApiKey.objects.select_for_update().select_related("namespace").get(pk=key.pk)
    if check_permission:
        require_role(user=actor, namespace=key.namespace, role=Role.ADMIN)
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        key.save(update_fields=["revoked_at"])
        audit_record(namespace=key.namespace, actor=actor, action="api-key-revoke", note=f"{key.name} ({key.lookup}…)")
    return key
