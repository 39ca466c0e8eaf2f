"""No publish is lost (issue 17): the broker down during a publish, a worker killed mid-build; a real worker."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from evergreen_site.celery import app as celery_app
from knowledge.models import BuildRequest, BuildStatus, EntryVersion, Namespace, ReleaseBuild
from knowledge.resilience.redis_guard import redis_breakers_reset
from knowledge.services.build_queue import build_requests_reconcile
from knowledge.services.entries import entry_create
from knowledge.services.versions import version_approve, version_publish, version_submit
from tests.configure import configure
from tests.factories import content
from tests.faults.processes import PrivateRedis, private_redis
from tests.worker import celery_sends_to, celery_worker, kill_hard, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    with private_redis() as server:
        yield server


@pytest.fixture
def broker(settings: Any, redis_server: PrivateRedis) -> Iterator[str]:
    """Tasks and the cache on the private Redis, as in production (one Redis for both)."""
    queue = f"evergreen-test-{uuid.uuid4().hex[:12]}"
    configure(settings, build_coalesce_seconds=0.0)
    settings.CACHES = {
        "default": {"BACKEND": "knowledge.resilience.cache.GuardedRedisCache", "LOCATION": redis_server.url}
    }
    redis_breakers_reset()
    celery_sends_to(celery_app, redis_server.url, queue)
    yield queue
    celery_sends_to(celery_app, None)
    redis_breakers_reset()


def approved(ns: Namespace, editor: Any, reviewer: Any, title: str) -> EntryVersion:
    fact = ns.categories.get(slug="fact")
    version = entry_create(namespace=ns, category=fact, content=content(title=title), actor=editor)
    version_submit(version=version, actor=editor)
    return version_approve(version=version, actor=reviewer)


def served_titles(ns: Namespace) -> list[str]:
    ns.refresh_from_db()
    release = ns.active_release
    return [item["id"] for item in release.manifest["entries"]] if release else []


def worker_env(server: PrivateRedis, queue: str, **extra: str) -> dict[str, str]:
    return {"REDIS_URL": server.url, "EVERGREEN_CELERY_QUEUE": queue, **extra}


def test_a_publish_while_redis_is_down_answers_normally_and_is_built_when_a_worker_starts(
    client: Any, broker: str, redis_server: PrivateRedis, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    version = approved(ns_a, editor, reviewer, "Published during the outage")
    redis_server.kill()
    client.force_login(reviewer)

    response = client.post(reverse("admin:knowledge_entryversion_transition", args=[version.pk, "publish"]))

    assert response.status_code == 302
    version.refresh_from_db()
    assert version.state == "published"
    request = BuildRequest.objects.get(namespace=ns_a)
    assert request.built_at is None and request.enqueued_at is None and "Error" in request.last_error
    assert served_titles(ns_a) == []

    redis_server.start()
    # Nothing hands the build over but the worker's own start-up reconciliation.
    with celery_worker(log=tmp_path / "worker.log", queue=broker, **worker_env(redis_server, broker)):
        wait_for(lambda: served_titles(ns_a) == [version.entry.public_id], what="the build of the lost publish")
    request.refresh_from_db()
    assert request.built_at is not None and request.release_id == Namespace.objects.get(pk=ns_a.pk).active_release_id


def test_a_publish_while_redis_hangs_answers_and_is_built_once_it_answers_again(
    client: Any, broker: str, redis_server: PrivateRedis, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    version = approved(ns_a, editor, reviewer, "Published while Redis hangs")
    client.force_login(reviewer)
    redis_server.pause()  # SIGSTOP: connections are accepted and never answered, as in a network partition
    try:
        response = client.post(reverse("admin:knowledge_entryversion_transition", args=[version.pk, "publish"]))
        # The reconciler hands over to the broker directly: its socket timeouts end the attempt (without
        # them this call would wait for ever).
        report = build_requests_reconcile()
    finally:
        redis_server.resume()

    assert response.status_code == 302
    assert report.failed == ["alpha"]
    request = BuildRequest.objects.get(namespace=ns_a)
    assert request.built_at is None and request.enqueued_at is None and "Timeout" in request.last_error
    with celery_worker(log=tmp_path / "worker.log", queue=broker, **worker_env(redis_server, broker)):
        wait_for(lambda: served_titles(ns_a) == [version.entry.public_id], what="the build of the publish")


def test_a_worker_killed_mid_build_is_replaced_by_the_reconciler_not_the_visibility_timeout(
    broker: str, redis_server: PrivateRedis, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    version = approved(ns_a, editor, reviewer, "Built after a crash")
    slow = worker_env(redis_server, broker, EVERGREEN_BUILD_PAUSE_SECONDS="300")
    with celery_worker(log=log, queue=broker, **slow) as worker:
        version_publish(version=version, actor=reviewer)
        wait_for(
            lambda: ReleaseBuild.objects.filter(namespace=ns_a, status=BuildStatus.RUNNING).exists(),
            what="the build to start",
        )
        kill_hard(worker)
    assert served_titles(ns_a) == []

    # The broker would redeliver the unacknowledged build only after its visibility timeout (an hour).
    with celery_worker(log=log, queue=broker, **worker_env(redis_server, broker)):
        # Right after the crash the build still counts as running; one requeue period later it does not.
        assert build_requests_reconcile().building == ["alpha"]
        later = timezone.now() + timedelta(seconds=61)
        assert build_requests_reconcile(now=later).handed_over == ["alpha"]
        wait_for(lambda: served_titles(ns_a) == [version.entry.public_id], what="the build handed over again")
    assert BuildRequest.objects.get(namespace=ns_a).built_at is not None


def test_a_build_killed_mid_way_is_handed_over_again_by_the_next_worker_without_beat(
    broker: str, redis_server: PrivateRedis, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    """QA: `make worker` without beat, killed mid-build and restarted at once, never built the release:
    its start-up reconciliation found the build still within its requeue period, and nothing looked again."""
    log = tmp_path / "worker.log"
    version = approved(ns_a, editor, reviewer, "Built after a crash, without beat")
    requeue = {"EVERGREEN_BUILD_REQUEUE_SECONDS": "10"}
    with celery_worker(
        log=log, queue=broker, **worker_env(redis_server, broker, EVERGREEN_BUILD_PAUSE_SECONDS="300")
    ) as worker:
        version_publish(version=version, actor=reviewer)
        wait_for(
            lambda: ReleaseBuild.objects.filter(namespace=ns_a, status=BuildStatus.RUNNING).exists(),
            what="the build to start",
        )
        kill_hard(worker)

    with celery_worker(log=log, queue=broker, **worker_env(redis_server, broker, **requeue)):
        wait_for(lambda: served_titles(ns_a) == [version.entry.public_id], what="the build handed over again")
    assert BuildRequest.objects.get(namespace=ns_a).built_at is not None
