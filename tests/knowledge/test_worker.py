"""Publishing through a real Celery worker on Redis and PostgreSQL, including a worker killed mid-build."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
import redis

from evergreen_site.celery import app as celery_app
from knowledge.models import BuildStatus, GateStatus, GoldenQuestion, Namespace, Release, ReleaseBuild
from knowledge.services.entries import entry_create
from knowledge.services.gate_override import release_gate_override
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from tests.configure import configure
from tests.factories import content
from tests.worker import celery_worker, kill_hard, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker(settings: Any) -> Any:
    """Send tasks to Redis for real (the test settings run them in-process) and coalesce as in production."""
    queue = f"evergreen-test-{uuid.uuid4().hex[:12]}"
    configure(settings, build_coalesce_seconds=1.0)
    celery_app.conf.update(task_always_eager=False, broker_url=settings.REDIS_URL, task_default_queue=queue)
    yield queue
    celery_app.conf.update(task_always_eager=True, task_default_queue="celery")
    redis.Redis.from_url(settings.REDIS_URL).delete(queue)


def publish(ns: Namespace, editor: Any, reviewer: Any, title: str, **fields: Any) -> Any:
    version = entry_create(
        namespace=ns, category=ns.categories.get(slug="fact"), content=content(title=title, **fields), actor=editor
    )
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    return version_publish(version=version, actor=reviewer)


def active_entry_count(ns: Namespace) -> int | None:
    ns.refresh_from_db()
    return ns.active_release.entry_count if ns.active_release else None


def test_publish_is_built_by_the_worker_and_switches_the_active_release(
    broker: Any, settings: Any, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    with celery_worker(log=log, queue=broker):
        publish(ns_a, editor, reviewer, "First fact")
        wait_for(lambda: active_entry_count(ns_a) == 1, what="the first release")

    # While a build waits in the queue, later publishes ride along with it: ten publishes, one message.
    for n in range(10):
        publish(ns_a, editor, reviewer, f"Burst fact {n}")
    assert redis.Redis.from_url(settings.REDIS_URL).llen(broker) == 1

    with celery_worker(log=log, queue=broker):
        wait_for(lambda: active_entry_count(ns_a) == 11, what="the release of the burst")
    assert Release.objects.filter(namespace=ns_a).count() == 2


def test_a_worker_killed_mid_build_leaves_the_last_release_serving_and_the_build_completes(
    broker: Any, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    log = tmp_path / "worker.log"
    with celery_worker(log=log, queue=broker):
        publish(ns_a, editor, reviewer, "First fact")
        wait_for(lambda: active_entry_count(ns_a) == 1, what="the first release")
    first = Namespace.objects.get(pk=ns_a.pk).active_release_id

    # A short visibility timeout and restore sweep, so the test need not wait an hour for the redelivery.
    quick = {
        "EVERGREEN_BROKER_VISIBILITY_TIMEOUT": "5",
        "EVERGREEN_BROKER_RESTORE_INTERVAL": "1",
        "EVERGREEN_BROKER_RESTORE_THROTTLE": "1",
    }
    slow = {"EVERGREEN_BUILD_PAUSE_SECONDS": "120", **quick}
    with celery_worker(log=log, queue=broker, **slow) as worker:
        publish(ns_a, editor, reviewer, "Second fact")
        wait_for(
            lambda: ReleaseBuild.objects.filter(namespace=ns_a, status=BuildStatus.RUNNING).exists(),
            what="the build to start",
        )
        kill_hard(worker)
    assert Namespace.objects.get(pk=ns_a.pk).active_release_id == first

    with celery_worker(log=log, queue=broker, **quick):
        wait_for(lambda: active_entry_count(ns_a) == 2, timeout=90, what="the redelivered build")
    assert ReleaseBuild.objects.filter(namespace=ns_a, status=BuildStatus.ABANDONED).exists()


def test_the_worker_holds_a_release_whose_golden_questions_regress(
    broker: Any, ns_a: Namespace, editor: Any, reviewer: Any, tmp_path: Path
) -> None:
    """Published through the worker: a harmless change is activated, a regressing one is built and held
    while the previous release keeps serving, and a reviewer's reason activates it."""
    log = tmp_path / "worker.log"
    with celery_worker(log=log, queue=broker):
        ships = publish(ns_a, editor, reviewer, "Alpha ships every Tuesday", summary="Releases leave on Tuesdays.")
        wait_for(lambda: active_entry_count(ns_a) == 1, what="the first release")
        GoldenQuestion.objects.create(
            namespace=ns_a, key="q-ships", text="When does alpha ship?", relevant={ships.entry.public_id: 2}
        )
        publish(ns_a, editor, reviewer, "Harbour opening hours", summary="The harbour opens at dawn.")
        wait_for(lambda: active_entry_count(ns_a) == 2, what="the harmless release")
        serving = Namespace.objects.get(pk=ns_a.pk).active_release
        assert serving is not None and serving.gate.status == GateStatus.PASSED

        draft = version_draft_for_entry(entry=ships.entry, actor=editor)
        unrelated = content(title="Bakery recipes", summary="Bread needs flour.", body="Knead the dough.", tags=[])
        version_save(version=draft, content=unrelated, expected_lock_version=draft.lock_version, actor=editor)
        version_submit(version=draft, actor=editor)
        version_approve(version=draft, actor=reviewer)
        version_publish(version=draft, actor=reviewer)
        build = wait_for(
            lambda: ReleaseBuild.objects.filter(namespace=ns_a, status=BuildStatus.HELD).first(),
            what="the held build",
        )
    held = build.release
    assert held is not None
    assert held.sequence == serving.sequence + 1
    assert held.gate.status == GateStatus.HELD
    assert held.gate.report["questions"][0]["regression"] in {"refused", "lost_expected"}
    assert Namespace.objects.get(pk=ns_a.pk).active_release == serving

    release_gate_override(release=held, actor=reviewer, reason="The shipping entry moves to the handbook.")
    assert Namespace.objects.get(pk=ns_a.pk).active_release == held
