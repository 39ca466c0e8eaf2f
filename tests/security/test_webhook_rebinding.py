"""Webhook SSRF through DNS rebinding: a delivery connects only to an address it checked.

A name that answers a public address when the endpoint's URL is checked and 127.0.0.1 when the
worker connects used to make the worker POST to loopback. Real DNS cannot be made to rebind in a
test, so `socket.getaddrinfo` is patched (as QA did in `manage.py shell`) to play a TTL-0 name;
the receiver is a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Any

import pytest

from knowledge.models import DeliveryStatus, Namespace, WebhookDelivery, WebhookEndpoint
from knowledge.services.webhook_delivery import webhook_attempt
from knowledge.services.webhooks import webhook_secret_new
from tests.configure import configure
from tests.observe.receiver import receiver

pytestmark = pytest.mark.django_db

PUBLIC = "93.184.216.34"


def answer(address: str, port: Any) -> list[Any]:
    return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port or 0)))]


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, list[str]], list[str]]:
    """dns(name, [first, second, ...]): `name` answers each address in turn, the last one thereafter.

    Returns the list of lookups of `name` made so far (one entry per lookup, the address answered).
    """
    real = socket.getaddrinfo

    def install(name: str, answers: list[str]) -> list[str]:
        lookups: list[str] = []

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            if host != name:
                return real(host, port, *args, **kwargs)
            address = answers[min(len(lookups), len(answers) - 1)]
            lookups.append(address)
            return answer(address, port)

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
        return lookups

    return install


def delivery_to(namespace: Namespace, url: str) -> WebhookDelivery:
    """An endpoint and a due notice, made directly (registering would itself resolve the name)."""
    endpoint = WebhookEndpoint.objects.create(namespace=namespace, url=url, secret=webhook_secret_new())
    return WebhookDelivery.objects.create(
        endpoint=endpoint, message_id="msg_rebinding", event="webhook.test", payload='{"type":"webhook.test"}'
    )


def test_a_name_rebinding_to_loopback_after_the_check_is_not_posted_to(
    ns_a: Namespace, settings: Any, dns: Callable[[str, list[str]], list[str]]
) -> None:
    configure(settings, webhook_allow_private=False)
    with receiver(200) as hooks:
        port = hooks.url.split(":")[2].split("/")[0]
        lookups = dns("rebind.example", [PUBLIC, "127.0.0.1"])
        delivery = delivery_to(ns_a, f"http://rebind.example:{port}/hooks/evergreen")

        outcome = webhook_attempt(delivery_id=delivery.pk)

    assert hooks.received == []
    assert lookups[:2] == [PUBLIC, "127.0.0.1"]
    delivery.refresh_from_db()
    assert outcome.status == DeliveryStatus.PENDING and outcome.retry_in is not None
    assert delivery.attempts == 1 and delivery.last_status_code is None
    assert "resolves to 127.0.0.1" in delivery.last_error
    assert [(item["status"], item["error"]) for item in delivery.log] == [(None, delivery.last_error)]
    assert WebhookEndpoint.objects.get().consecutive_failures == 1


def test_an_allowed_address_is_posted_to_once_resolved_with_the_original_host_header(
    ns_a: Namespace, settings: Any, dns: Callable[[str, list[str]], list[str]]
) -> None:
    configure(settings, webhook_allow_private=True)
    with receiver(200) as hooks:
        port = hooks.url.split(":")[2].split("/")[0]
        lookups = dns("hooks.example", ["127.0.0.1"])
        delivery = delivery_to(ns_a, f"http://hooks.example:{port}/hooks/evergreen")

        outcome = webhook_attempt(delivery_id=delivery.pk)

    assert outcome.status == DeliveryStatus.DELIVERED
    assert len(hooks.received) == 1
    assert hooks.received[0].headers["host"] == f"hooks.example:{port}"
    assert hooks.received[0].path == "/hooks/evergreen"
    assert lookups == ["127.0.0.1"]  # the connection went to the checked address, not to a second lookup
