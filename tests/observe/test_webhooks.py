"""Webhooks: signed notices of activations and rollbacks to a real receiver on loopback, retries, disabling."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest
import time_machine
from django.utils import timezone
from standardwebhooks import Webhook, WebhookVerificationError

from knowledge.errors import InvalidInputError, NotAllowedError
from knowledge.models import DeliveryStatus, Namespace, Release, Role, WebhookDelivery, WebhookEndpoint
from knowledge.services.rollback import release_rollback
from knowledge.services.webhook_delivery import webhook_attempt
from knowledge.services.webhooks import webhook_endpoint_create
from tests.configure import configure
from tests.factories import UserFactory, membership
from tests.observe.receiver import receiver
from tests.observe.releases import second_release

pytestmark = pytest.mark.django_db


@pytest.fixture
def tenant_admin(ns_a: Namespace) -> Any:
    return membership(UserFactory(username="ada"), ns_a, Role.ADMIN)


@pytest.fixture
def loopback_allowed(settings: Any) -> None:
    configure(settings, webhook_allow_private=True, webhook_retry_base_seconds=10.0)


def register(namespace: Namespace, url: str, admin: Any) -> tuple[WebhookEndpoint, str]:
    return webhook_endpoint_create(namespace=namespace, url=url, description="test", actor=admin)


def test_an_activation_is_announced_with_a_notice_the_standard_webhooks_library_verifies(
    alpha: Namespace, tenant_admin: Any, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    with receiver(200) as hooks:
        _, secret = register(alpha, hooks.url, tenant_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)
    assert len(hooks.received) == 1
    notice = hooks.received[0]
    payload = Webhook(secret).verify(notice.body, notice.headers)

    assert notice.path == "/hooks/evergreen"
    assert notice.headers["content-type"] == "application/json"
    assert notice.headers["webhook-id"].startswith("msg_")
    assert payload["type"] == "release.activated"
    assert payload["data"]["namespace"] == "alpha"
    assert payload["data"]["release"]["releaseId"] == 2
    assert payload["data"]["previous"]["releaseId"] == 1
    assert payload["data"]["changes"] == {"added": 1, "changed": 1, "retired": 0, "restored": 0, "removed": 0}
    assert payload["data"]["changesUrl"] == "https://alpha.example.com/api/changes?since=1"
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.last_status_code) == (DeliveryStatus.DELIVERED, 1, 200)
    assert delivery.message_id == notice.headers["webhook-id"]


def test_a_notice_replayed_later_or_altered_fails_verification(
    alpha: Namespace, tenant_admin: Any, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    with receiver(200) as hooks:
        _, secret = register(alpha, hooks.url, tenant_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)
    notice = hooks.received[0]
    with time_machine.travel(timezone.now() + timedelta(minutes=6)), pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(notice.body, notice.headers)  # too old: a replay is refused
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(notice.body.replace(b'"alpha"', b'"other"'), notice.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(notice.body, {**notice.headers, "webhook-timestamp": "1700000000"})


def test_failed_attempts_are_retried_with_backoff_and_logged(
    alpha: Namespace, tenant_admin: Any, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    with receiver(500, 503, 200) as hooks:
        register(alpha, hooks.url, tenant_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)  # the first attempt runs in-process and fails
        delivery = WebhookDelivery.objects.get()
        waits = []
        while delivery.status == DeliveryStatus.PENDING:
            assert delivery.next_attempt_at is not None and delivery.last_attempt_at is not None
            waits.append((delivery.next_attempt_at - delivery.last_attempt_at).total_seconds())
            assert (
                webhook_attempt(delivery_id=delivery.pk, now=delivery.next_attempt_at - timedelta(seconds=1)).status
                == "skipped"
            )
            webhook_attempt(delivery_id=delivery.pk, now=delivery.next_attempt_at)
            delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.DELIVERED
    assert [item["status"] for item in delivery.log] == [500, 503, 200]
    assert 8 <= waits[0] <= 12.5 and 16 <= waits[1] <= 24.5  # 10 s x 2^(n-1), ±20 %
    assert len({r.headers["webhook-id"] for r in hooks.received}) == 1  # the same id on every attempt
    assert WebhookEndpoint.objects.get().consecutive_failures == 0


def test_an_endpoint_that_keeps_failing_is_disabled_and_its_notices_cancelled(
    alpha: Namespace,
    tenant_admin: Any,
    loopback_allowed: None,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    configure(settings, webhook_allow_private=True, webhook_disable_after=3, webhook_max_attempts=10)
    with receiver(500) as hooks:
        endpoint, _ = register(alpha, hooks.url, tenant_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)
        delivery = WebhookDelivery.objects.get()
        for _ in range(5):
            delivery.refresh_from_db()
            if delivery.next_attempt_at is None:
                break
            webhook_attempt(delivery_id=delivery.pk, now=delivery.next_attempt_at)
    endpoint.refresh_from_db()
    delivery.refresh_from_db()
    assert len(hooks.received) == 3
    assert not endpoint.is_active and endpoint.disabled_at is not None
    assert "3 consecutive failed attempts" in endpoint.disabled_reason
    assert delivery.status == DeliveryStatus.CANCELLED


def test_a_receiver_answering_410_gone_is_disabled_at_once(
    alpha: Namespace, tenant_admin: Any, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    with receiver(410) as hooks:
        endpoint, _ = register(alpha, hooks.url, tenant_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)
    endpoint.refresh_from_db()
    assert len(hooks.received) == 1
    assert not endpoint.is_active and "410" in endpoint.disabled_reason


def test_a_rollback_is_announced_as_rolled_back(
    alpha: Namespace, tenant_admin: Any, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    second_release(alpha)
    with receiver(200) as hooks:
        _, secret = register(alpha, hooks.url, tenant_admin)
        first = Release.objects.get(namespace=alpha, sequence=1)
        with django_capture_on_commit_callbacks(execute=True):
            release_rollback(namespace=alpha, release=first, actor=tenant_admin)
    payload = Webhook(secret).verify(hooks.received[0].body, hooks.received[0].headers)
    assert payload["type"] == "release.rolled_back"
    assert payload["data"]["release"]["releaseId"] == 1 and payload["data"]["previous"]["releaseId"] == 2
    assert payload["data"]["changes"]["removed"] == 1


def test_other_namespaces_endpoints_hear_nothing(
    alpha: Namespace, beta: Namespace, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    beta_admin = membership(UserFactory(username="bea"), beta, Role.ADMIN)
    with receiver(200) as hooks:
        register(beta, hooks.url, beta_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)
    assert hooks.received == []


def test_loopback_and_private_addresses_are_refused_unless_allowed(
    alpha: Namespace, tenant_admin: Any, settings: Any
) -> None:
    for url in ("http://127.0.0.1:9/hook", "http://10.1.2.3/hook", "http://[::1]/hook", "ftp://example.com/x"):
        with pytest.raises(InvalidInputError):
            register(alpha, url, tenant_admin)
    assert not WebhookEndpoint.objects.exists()


def test_only_namespace_admins_register_endpoints(
    alpha: Namespace, editor: Any, reviewer: Any, outsider: Any, loopback_allowed: None
) -> None:
    for person in (editor, reviewer, outsider):
        with pytest.raises(NotAllowedError):
            register(alpha, "http://127.0.0.1:9/hook", person)


def test_the_admin_shows_the_secret_once_and_hides_endpoints_from_others(
    client: Any, alpha: Namespace, tenant_admin: Any, editor: Any, loopback_allowed: None
) -> None:
    client.force_login(tenant_admin)
    added = client.post(
        "/admin/knowledge/webhookendpoint/add/",
        {"namespace": alpha.pk, "url": "http://127.0.0.1:9/hook", "description": "CDN purge"},
        follow=True,
    )
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secret in added.content.decode() and "no-store" in added["Cache-Control"]
    assert not any(endpoint.secret in str(m) for m in added.context["messages"])
    page = client.get(f"/admin/knowledge/webhookendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200 and endpoint.secret not in page.content.decode()

    client.force_login(editor)
    assert client.get("/admin/knowledge/webhookendpoint/").status_code == 403
    assert client.get(f"/admin/knowledge/webhookendpoint/{endpoint.pk}/change/").status_code in (302, 403, 404)


def test_a_stored_payload_is_the_exact_body_sent(
    alpha: Namespace, tenant_admin: Any, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    with receiver(200) as hooks:
        register(alpha, hooks.url, tenant_admin)
        with django_capture_on_commit_callbacks(execute=True):
            second_release(alpha)
    assert hooks.received[0].body == WebhookDelivery.objects.get().payload.encode()
    assert json.loads(hooks.received[0].body)["timestamp"].endswith("Z")
