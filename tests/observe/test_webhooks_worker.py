"""A publish announced by a real Celery worker on Redis and PostgreSQL, retried after a failure, to a real receiver."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
from standardwebhooks import Webhook

from evergreen_site.celery import app as celery_app
from knowledge.models import DeliveryStatus, Namespace, Role, WebhookDelivery
from knowledge.services.webhooks import webhook_endpoint_create
from tests.configure import configure
from tests.factories import UserFactory, membership
from tests.knowledge.test_worker import publish
from tests.observe.receiver import receiver
from tests.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

WORKER_ENV = {"EVERGREEN_WEBHOOK_ALLOW_PRIVATE": "1", "EVERGREEN_WEBHOOK_RETRY_BASE_SECONDS": "0.5"}


@pytest.fixture
def broker(settings: Any) -> Any:
    queue = f"evergreen-test-{uuid.uuid4().hex[:12]}"
    configure(settings, webhook_allow_private=True)
    celery_app.conf.update(task_always_eager=False, broker_url=settings.REDIS_URL, task_default_queue=queue)
    yield queue
    celery_app.conf.update(task_always_eager=True, task_default_queue="celery")
    redis.Redis.from_url(settings.REDIS_URL).delete(queue)


def test_the_worker_delivers_the_notice_after_a_failed_attempt(
    broker: Any, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    admin = membership(UserFactory(username="ada"), ns_a, Role.ADMIN)
    worker_env = {**WORKER_ENV, "EVERGREEN_CELERY_QUEUE": broker}
    with receiver(502, 200) as hooks, celery_worker(log=tmp_path / "worker.log", queue=broker, **worker_env):
        _, secret = webhook_endpoint_create(namespace=ns_a, url=hooks.url, actor=admin)
        publish(ns_a, editor, reviewer, "First fact")
        wait_for(
            lambda: WebhookDelivery.objects.filter(status=DeliveryStatus.DELIVERED).exists(),
            what="the notice to be delivered",
        )
    delivery = WebhookDelivery.objects.get()
    assert [item["status"] for item in delivery.log] == [502, 200]
    assert len(hooks.received) == 2
    payload = Webhook(secret).verify(hooks.received[1].body, hooks.received[1].headers)
    assert payload["type"] == "release.activated" and payload["data"]["release"]["releaseId"] == 1
    assert payload["data"]["previous"] is None
