"""Webhook endpoints and release activations: every switch of the active release is recorded and announced.

A notice follows Standard Webhooks 1.0: a JSON body signed with HMAC-SHA256 over
"<webhook-id>.<webhook-timestamp>.<body>", the key being the endpoint's whsec_ secret. The
webhook-id stays the same on every attempt (receivers drop duplicates by it) and the timestamp
is the attempt's, so a receiver that refuses timestamps older than a few minutes cannot be
replayed an old notice. Deliveries are knowledge.services.webhook_delivery's.
"""

from __future__ import annotations

import base64
import ipaddress
import logging
import secrets
import socket
from datetime import datetime
from functools import partial
from typing import Any, Final
from urllib.parse import urlsplit

import orjson
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import InvalidInputError
from knowledge.models import (
    ActivationKind,
    DeliveryStatus,
    Namespace,
    Release,
    ReleaseActivation,
    Role,
    WebhookDelivery,
    WebhookEndpoint,
)
from knowledge.retrieval.changes import Manifest, change_counts, manifest_changes
from knowledge.retrieval.contract.records import PUBLIC, clears
from knowledge.retrieval.timestamps import rfc3339
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record

logger = logging.getLogger(__name__)

SECRET_PREFIX: Final = "whsec_"  # noqa: S105 - the Standard Webhooks prefix, not a secret
EVENT_ACTIVATED: Final = "release.activated"
EVENT_ROLLED_BACK: Final = "release.rolled_back"
EVENT_TEST: Final = "webhook.test"
URL_SCHEME: Final = "A webhook URL must start with https:// or http://."
URL_UNRESOLVED: Final = "The host of {url} does not resolve: {error}."
URL_PRIVATE: Final = (
    "{url} resolves to {address}, a loopback, private or reserved address; webhooks only go to public "
    "addresses (EVERGREEN_WEBHOOK_ALLOW_PRIVATE=1 allows others, for a private network)."
)


def webhook_secret_new() -> str:
    """whsec_ and 24 random bytes in base64, the Standard Webhooks form."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def webhook_url_problem(url: str) -> str | None:
    """Why Evergreen will not post to `url` (None when it will): the scheme, or an address it must not reach.

    Checked when an endpoint is saved and again before each attempt (DNS can change in between), so a
    namespace admin cannot make the worker call the metadata service or the database on the inside.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        return URL_SCHEME
    if settings.EVERGREEN.webhook_allow_private:
        return None
    return webhook_addresses(url, parts.hostname, parts.port or 443)[1]


def webhook_addresses(url: str, host: str, port: int) -> tuple[list[str], str | None]:
    """The addresses `host` resolves to, or none and why Evergreen will not post to `url` there.

    Every address must pass (unless EVERGREEN_WEBHOOK_ALLOW_PRIVATE); a delivery connects only to
    addresses this returned, never resolving the name again (a rebinding name could answer otherwise).
    """
    try:
        found = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as error:
        return [], URL_UNRESOLVED.format(url=url, error=error)
    addresses = list(dict.fromkeys(str(address[0]) for *_, address in found))
    if not settings.EVERGREEN.webhook_allow_private:
        for address in addresses:
            ip = ipaddress.ip_address(address)
            if not ip.is_global:
                return [], URL_PRIVATE.format(url=url, address=ip)
    return addresses, None


def webhook_endpoint_create(
    *, namespace: Namespace, url: str, description: str = "", actor: Actor
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint; returns it and its secret (shown once to the admin who made it)."""
    require_role(user=actor, namespace=namespace, role=Role.ADMIN)
    problem = webhook_url_problem(url)
    if problem is not None:
        raise InvalidInputError(problem)
    secret = webhook_secret_new()
    endpoint = WebhookEndpoint.objects.create(
        namespace=namespace,
        url=url,
        description=description,
        secret=secret,
        created_by=actor_user(actor),
    )
    audit_record(namespace=namespace, actor=actor, action="webhook", note=f"Registered webhook {url}.")
    return endpoint, secret


def webhook_endpoint_change(*, endpoint: WebhookEndpoint, url: str, description: str, actor: Actor) -> WebhookEndpoint:
    require_role(user=actor, namespace=endpoint.namespace, role=Role.ADMIN)
    problem = webhook_url_problem(url)
    if problem is not None:
        raise InvalidInputError(problem)
    endpoint.url, endpoint.description = url, description
    endpoint.save(update_fields=["url", "description"])
    audit_record(namespace=endpoint.namespace, actor=actor, action="webhook", note=f"Changed webhook to {url}.")
    return endpoint


def webhook_secret_rotate(*, endpoint: WebhookEndpoint, actor: Actor) -> str:
    """A new secret from the next attempt on (pending notices are signed with it too)."""
    require_role(user=actor, namespace=endpoint.namespace, role=Role.ADMIN)
    endpoint.secret = webhook_secret_new()
    endpoint.save(update_fields=["secret"])
    audit_record(namespace=endpoint.namespace, actor=actor, action="webhook", note=f"Rotated the secret of {endpoint}.")
    return endpoint.secret


def webhook_endpoint_enable(*, endpoint: WebhookEndpoint, actor: Actor) -> WebhookEndpoint:
    require_role(user=actor, namespace=endpoint.namespace, role=Role.ADMIN)
    problem = webhook_url_problem(endpoint.url)
    if problem is not None:
        raise InvalidInputError(problem)
    endpoint.is_active = True
    endpoint.consecutive_failures = 0
    endpoint.disabled_at = None
    endpoint.disabled_reason = ""
    endpoint.save(update_fields=["is_active", "consecutive_failures", "disabled_at", "disabled_reason"])
    audit_record(namespace=endpoint.namespace, actor=actor, action="webhook", note=f"Enabled {endpoint}.")
    return endpoint


def _release_summary(release: Release) -> dict[str, Any]:
    return {
        "releaseId": release.sequence,
        "knowledgeVersion": release.knowledge_version,
        "revision": str(release.revision),  # a date, or its ISO text on a release just created
        "generatedAt": rfc3339(release.built_at),
        "entryCount": release.entry_count,
    }


def manifest_public(manifest: Manifest | None) -> Manifest | None:
    """A manifest as a public reader sees it: without the entries it names as internal or restricted."""
    if not manifest:
        return manifest
    entries = [item for item in manifest.get("entries", ()) if clears(PUBLIC, item.get("sensitivity", PUBLIC))]
    return {**manifest, "entries": entries}


def activation_payload(activation: ReleaseActivation) -> dict[str, Any]:
    """The notice's body: which release serves now, which served before, and how many entries changed.

    `changes` counts what `changesUrl` (/api/changes) answers a public reader for the same two releases, so
    an entry turned internal is `removed` and one made public again `added` (QA: a rollback that showed an
    internal entry to public readers again counted nothing). A receiver holds no clearance, so the notice
    never counts what only cleared keys see; they read their own view at changesUrl.
    """
    namespace, release, previous = activation.namespace, activation.release, activation.previous
    before = manifest_public(previous.manifest if previous else None)
    changes = manifest_changes(before, manifest_public(release.manifest) or {})
    base = namespace.base_url.rstrip("/")
    since = previous.sequence if previous else 0
    return {
        "type": EVENT_ROLLED_BACK if activation.kind == ActivationKind.ROLLBACK else EVENT_ACTIVATED,
        "timestamp": rfc3339(activation.at),
        "data": {
            "namespace": namespace.slug,
            "release": _release_summary(release),
            "previous": _release_summary(previous) if previous else None,
            "changes": change_counts(changes),
            "changesUrl": f"{base}/api/changes?since={since}",
            "contextUrl": f"{base}/api/context",
        },
    }


def _message_id() -> str:
    return "msg_" + secrets.token_hex(12)


def delivery_queue(delivery_id: int) -> None:
    """Hand a notice to Celery after commit; with the broker down, the beat sweep sends it later."""
    from knowledge.tasks import webhook_deliver_task  # noqa: PLC0415  # the tasks module imports this one

    try:
        webhook_deliver_task.delay(delivery_id)
    except Exception as error:  # noqa: BLE001  # never fail the change that caused the notice
        logger.warning("Could not queue webhook delivery %s: %s", delivery_id, error)


def delivery_create(*, endpoint: WebhookEndpoint, event: str, payload: dict[str, Any], activation: Any) -> Any:
    delivery = WebhookDelivery.objects.create(
        endpoint=endpoint,
        activation=activation,
        message_id=_message_id(),
        event=event,
        payload=orjson.dumps(payload).decode(),
        status=DeliveryStatus.PENDING,
        next_attempt_at=timezone.now(),
    )
    transaction.on_commit(partial(delivery_queue, delivery.pk))
    return delivery


def release_activation_record(
    *, namespace_id: int, release: Release, previous_id: int | None, kind: str, at: datetime | None = None
) -> ReleaseActivation:
    """Record a switch of the active release (inside its transaction) and queue a notice per active endpoint."""
    activation = ReleaseActivation.objects.create(
        namespace_id=namespace_id, release=release, previous_id=previous_id, kind=kind, at=at or timezone.now()
    )
    endpoints = list(WebhookEndpoint.objects.filter(namespace_id=namespace_id, is_active=True))
    if endpoints:
        payload = activation_payload(activation)
        for endpoint in endpoints:
            delivery_create(endpoint=endpoint, event=payload["type"], payload=payload, activation=activation)
    return activation


def webhook_test_send(*, endpoint: WebhookEndpoint, actor: Actor) -> WebhookDelivery:
    """A webhook.test notice naming the serving release, so an admin can check the receiver end to end."""
    require_role(user=actor, namespace=endpoint.namespace, role=Role.ADMIN)
    namespace = endpoint.namespace
    release = namespace.active_release
    payload = {
        "type": EVENT_TEST,
        "timestamp": rfc3339(timezone.now()),
        "data": {"namespace": namespace.slug, "release": _release_summary(release) if release else None},
    }
    with transaction.atomic():
        return delivery_create(endpoint=endpoint, event=EVENT_TEST, payload=payload, activation=None)
