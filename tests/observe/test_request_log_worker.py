"""The log flusher with real processes: a web process ships its buffer to Redis, a real Celery worker writes it."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from evergreen_site.celery import app as celery_app
from knowledge.models import Namespace, RequestLog
from knowledge.requestlog.buffer import buffer
from knowledge.services.request_log import QUEUE_KEY
from knowledge.tasks import request_log_drain_task
from tests.configure import configure
from tests.servingfixtures import alpha_rows, publish
from tests.worker import celery_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker(settings: Any) -> Any:
    queue = f"evergreen-test-{uuid.uuid4().hex[:12]}"
    celery_app.conf.update(task_always_eager=False, broker_url=settings.REDIS_URL, task_default_queue=queue)
    configure(settings, request_log=True, request_log_sample=1.0)
    shared = redis.Redis.from_url(settings.REDIS_URL)
    shared.delete(QUEUE_KEY)
    buffer.clear()
    yield queue
    celery_app.conf.update(task_always_eager=True, task_default_queue="celery")
    shared.delete(queue, QUEUE_KEY)
    buffer.clear()


def test_buffered_requests_reach_the_database_through_redis_and_a_worker(
    broker: str, ns_a: Namespace, client: Any, tmp_path: Path, settings: Any
) -> None:
    publish(ns_a, alpha_rows())
    for topic in ("alpha", "pricing", "zeppelin fuel"):
        assert client.get(f"/t/alpha/api/context?topic={topic}").status_code == 200
    buffer.flush()  # what the flusher thread does every second
    shared = redis.Redis.from_url(settings.REDIS_URL)
    assert shared.llen(QUEUE_KEY) == 1 and not RequestLog.objects.exists()

    with celery_worker(log=tmp_path / "worker.log", queue=broker, EVERGREEN_CELERY_QUEUE=broker):
        request_log_drain_task.delay()  # what Celery beat sends every few seconds
        wait_for(lambda: RequestLog.objects.count() == 3, what="the worker to write the batch")
    assert sorted(RequestLog.objects.values_list("topic", flat=True)) == ["alpha", "pricing", "zeppelin fuel"]
    assert shared.llen(QUEUE_KEY) == 0
