"""Delivering webhook notices: one signed POST per attempt, backoff between attempts, disabling dead endpoints.

An attempt succeeds on any 2xx answer. A failure (another status, a timeout, a refused connection)
schedules the next attempt after base x 2^(n-1) seconds (capped, ±20 % jitter) until the notice has
had EVERGREEN_WEBHOOK_MAX_ATTEMPTS; an endpoint whose last EVERGREEN_WEBHOOK_DISABLE_AFTER attempts
all failed, or that answers 410 Gone, is disabled and its pending notices cancelled. Every attempt is
appended to the delivery's log, which is also what /metrics counts attempts from (knowledge.telemetry.state:
the worker that makes them is another container, without a metrics endpoint).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Final

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import DeliveryStatus, Role, WebhookDelivery, WebhookEndpoint
from knowledge.services.access import require_role
from knowledge.services.webhooks import (
    SECRET_PREFIX,
    URL_UNRESOLVED,
    delivery_queue,
    webhook_addresses,
    webhook_url_problem,
)

USER_AGENT: Final = "Evergreen-Webhooks/1 (+https://www.standardwebhooks.com/)"
DISABLED_FAILURES: Final = "Disabled after {count} consecutive failed attempts; the last: {error}"
DISABLED_GONE: Final = "Disabled: the receiver answered 410 Gone."
ERROR_MAX: Final = 300
LOG_MAX: Final = 50
# While an attempt is in flight, nobody else takes the delivery (a sweep, a redelivered task).
LEASE_SECONDS: Final = 60


@dataclass(frozen=True, slots=True)
class AttemptOutcome:
    status: str  # a DeliveryStatus value, or "skipped" when nothing was due
    retry_in: float | None = None  # seconds until the next attempt, when one is scheduled


def webhook_signature(*, secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """Standard Webhooks v1: base64(HMAC-SHA256(key, "<id>.<timestamp>.<body>")), the key being the secret's bytes."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    digest = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def retry_delay(attempts: int) -> float:
    """Seconds to wait after the `attempts`-th failed attempt."""
    config = settings.EVERGREEN
    delay = min(config.webhook_retry_max_seconds, config.webhook_retry_base_seconds * 2 ** (attempts - 1))
    return delay * random.uniform(0.8, 1.2)  # noqa: S311  # jitter, not security


def _take(delivery_id: int, now: datetime) -> WebhookDelivery | None:
    """The delivery if it is pending and due, leased to this attempt."""
    with transaction.atomic():
        delivery = (
            WebhookDelivery.objects.select_for_update(skip_locked=True)
            .select_related("endpoint")
            .filter(pk=delivery_id, status=DeliveryStatus.PENDING)
            .first()
        )
        if delivery is None or (delivery.next_attempt_at is not None and delivery.next_attempt_at > now):
            return None
        if not delivery.endpoint.is_active:
            delivery.status = DeliveryStatus.CANCELLED
            delivery.next_attempt_at = None
            delivery.save(update_fields=["status", "next_attempt_at"])
            return None
        delivery.next_attempt_at = now + timedelta(seconds=LEASE_SECONDS + settings.EVERGREEN.webhook_timeout_seconds)
        delivery.save(update_fields=["next_attempt_at"])
        return delivery


def _post(endpoint: WebhookEndpoint, delivery: WebhookDelivery) -> tuple[int | None, str]:
    """(HTTP status or None, error text or ""): the answer's body is never read.

    The host is resolved once here and every address checked; the POST goes to a checked address
    literally (the Host header, TLS SNI and certificate check keep the name), so a name that
    resolves differently on a second lookup (DNS rebinding) cannot send it elsewhere.
    """
    problem = webhook_url_problem(endpoint.url)
    if problem is not None:
        return None, problem
    try:
        target = httpx.URL(endpoint.url)
    except httpx.InvalidURL as error:
        return None, f"InvalidURL: {error}"[:ERROR_MAX]
    host = target.raw_host.decode("ascii")
    addresses, problem = webhook_addresses(endpoint.url, host, target.port or (443 if target.scheme == "https" else 80))
    if problem is not None:
        return None, problem[:ERROR_MAX]
    body = delivery.payload.encode()
    timestamp = int(time.time())
    headers = {
        "Host": target.netloc.decode("ascii"),
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "webhook-id": delivery.message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": webhook_signature(
            secret=endpoint.secret, message_id=delivery.message_id, timestamp=timestamp, body=body
        ),
    }
    extensions = {"sni_hostname": host} if target.scheme == "https" else {}
    timeout = httpx.Timeout(settings.EVERGREEN.webhook_timeout_seconds)
    refused = ""
    with httpx.Client(timeout=timeout) as client:
        for address in addresses:  # in resolver order, like a connection to the name would try them
            pinned = target.copy_with(host=address.partition("%")[0])
            try:
                with client.stream("POST", pinned, content=body, headers=headers, extensions=extensions) as answer:
                    status = answer.status_code
            except httpx.ConnectError as failure:
                refused = f"{type(failure).__name__}: {failure}"[:ERROR_MAX]
                continue
            except httpx.HTTPError as failure:
                return None, f"{type(failure).__name__}: {failure}"[:ERROR_MAX]
            return status, "" if 200 <= status < 300 else f"HTTP {status}"
    return None, refused or URL_UNRESOLVED.format(url=endpoint.url, error="no address")[:ERROR_MAX]


def _disable(endpoint_id: int, reason: str, now: datetime) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint_id, is_active=True).update(
        is_active=False, disabled_at=now, disabled_reason=reason[:ERROR_MAX]
    )
    WebhookDelivery.objects.filter(endpoint_id=endpoint_id, status=DeliveryStatus.PENDING).update(
        status=DeliveryStatus.CANCELLED, next_attempt_at=None
    )


def _record(delivery: WebhookDelivery, status: int | None, error: str, millis: int, now: datetime) -> AttemptOutcome:
    config = settings.EVERGREEN
    delivery.attempts += 1
    delivery.last_attempt_at = now
    delivery.last_status_code = status
    delivery.last_error = error
    delivery.log = [*delivery.log, {"at": now.isoformat(), "status": status, "error": error, "ms": millis}][-LOG_MAX:]
    fields = ["attempts", "last_attempt_at", "last_status_code", "last_error", "log", "status", "next_attempt_at"]
    endpoints = WebhookEndpoint.objects.filter(pk=delivery.endpoint_id)
    if not error:
        delivery.status, delivery.next_attempt_at, delivery.delivered_at = DeliveryStatus.DELIVERED, None, now
        delivery.save(update_fields=[*fields, "delivered_at"])
        endpoints.update(consecutive_failures=0)
        return AttemptOutcome(DeliveryStatus.DELIVERED)
    retry_in: float | None = None
    if delivery.attempts >= config.webhook_max_attempts:
        delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
    else:
        retry_in = retry_delay(delivery.attempts)
        delivery.next_attempt_at = now + timedelta(seconds=retry_in)
    delivery.save(update_fields=fields)
    endpoints.update(consecutive_failures=F("consecutive_failures") + 1)
    failures = endpoints.values_list("consecutive_failures", flat=True).first() or 0
    if status == 410:
        _disable(delivery.endpoint_id, DISABLED_GONE, now)
        return AttemptOutcome(DeliveryStatus.CANCELLED)
    if failures >= config.webhook_disable_after:
        _disable(delivery.endpoint_id, DISABLED_FAILURES.format(count=failures, error=error), now)
        return AttemptOutcome(DeliveryStatus.CANCELLED)
    return AttemptOutcome(delivery.status, retry_in)


def webhook_attempt(*, delivery_id: int, now: datetime | None = None) -> AttemptOutcome:
    """One attempt at a pending, due delivery; a delivery that is not due (or not pending) is skipped."""
    now = now or timezone.now()
    delivery = _take(delivery_id, now)
    if delivery is None:
        return AttemptOutcome("skipped")
    started = time.monotonic()
    status, error = _post(delivery.endpoint, delivery)
    millis = round((time.monotonic() - started) * 1000)
    return _record(delivery, status, error, millis, timezone.now())


def webhooks_due(*, now: datetime | None = None, grace_seconds: float = 0) -> list[int]:
    """Pending deliveries whose next attempt is overdue by `grace_seconds` (for the beat sweep)."""
    limit = (now or timezone.now()) - timedelta(seconds=grace_seconds)
    pending = WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=limit)
    return list(pending.order_by("next_attempt_at").values_list("pk", flat=True)[:500])


def webhook_retry_now(*, delivery: WebhookDelivery, actor: Actor) -> WebhookDelivery:
    """An admin's "retry now": a failed or pending notice is queued again (cancelled if its endpoint is off)."""
    require_role(user=actor, namespace=delivery.endpoint.namespace, role=Role.ADMIN)
    delivery.status, delivery.next_attempt_at = DeliveryStatus.PENDING, timezone.now()
    delivery.save(update_fields=["status", "next_attempt_at"])
    transaction.on_commit(partial(delivery_queue, delivery.pk))
    return delivery
