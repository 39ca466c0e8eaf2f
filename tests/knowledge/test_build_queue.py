"""The build outbox: a request in the change's transaction, hand-over after commit, and the reconciler."""

from __future__ import annotations

import threading
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from evergreen_site.celery import app as celery_app
from knowledge.models import BuildRequest, BuildStatus, EntryVersion, Namespace, ReleaseBuild
from knowledge.services.build_queue import MAX_ATTEMPTS, EmbeddedReconciler, build_requests_reconcile
from knowledge.services.entries import entry_create
from knowledge.services.releases import release_build
from knowledge.services.versions import version_approve, version_publish, version_submit
from tests.factories import content
from tests.worker import celery_sends_to

pytestmark = pytest.mark.django_db

UNREACHABLE_BROKER = "redis://127.0.0.1:9/0"  # the discard port: nothing answers there


def approved(ns: Namespace, editor: Any, reviewer: Any, title: str = "A fact") -> EntryVersion:
    fact = ns.categories.get(slug="fact")
    version = entry_create(namespace=ns, category=fact, content=content(title=title), actor=editor)
    version_submit(version=version, actor=editor)
    return version_approve(version=version, actor=reviewer)


@pytest.fixture
def broker_down() -> Any:
    """Celery sends for real, to a broker that refuses connections."""
    celery_sends_to(celery_app, UNREACHABLE_BROKER)
    yield
    celery_sends_to(celery_app, None)


def test_a_publish_writes_its_build_request_in_its_own_transaction(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    version = approved(ns_a, editor, reviewer)
    with django_capture_on_commit_callbacks(execute=False):
        version_publish(version=version, actor=reviewer)
    request = BuildRequest.objects.get(namespace=ns_a)
    assert (request.reason, request.serial, request.built_at) == ("publish", ns_a.content_serial + 1, None)

    other = approved(ns_a, editor, reviewer, "Rolled back with its transaction")

    def publish_then_fail() -> None:
        with transaction.atomic():
            version_publish(version=other, actor=reviewer)
            raise RuntimeError("the request fails after publishing")

    with pytest.raises(RuntimeError):
        publish_then_fail()
    assert BuildRequest.objects.filter(namespace=ns_a).count() == 1


def test_a_broker_that_refuses_the_build_never_fails_the_publish(
    ns_a: Namespace, editor: Any, reviewer: Any, broker_down: None, django_capture_on_commit_callbacks: Any
) -> None:
    version = approved(ns_a, editor, reviewer)
    with django_capture_on_commit_callbacks(execute=True):
        version_publish(version=version, actor=reviewer)

    request = BuildRequest.objects.get(namespace=ns_a)
    assert request.enqueued_at is None and request.built_at is None and request.last_error
    assert build_requests_reconcile().failed == ["alpha"]


def test_the_reconciler_builds_what_a_failed_hand_over_left_pending(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    celery_sends_to(celery_app, UNREACHABLE_BROKER)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            version_publish(version=approved(ns_a, editor, reviewer), actor=reviewer)
    finally:
        celery_sends_to(celery_app, None)

    report = build_requests_reconcile()  # in-process now (eager): the build runs here

    assert report.handed_over == ["alpha"]
    ns_a.refresh_from_db()
    assert ns_a.active_release is not None and ns_a.active_release.entry_count == 1
    request = BuildRequest.objects.get(namespace=ns_a)
    assert request.built_at is not None and request.release_id == ns_a.active_release_id
    assert build_requests_reconcile().describe() == "no release pending"


def test_a_build_satisfies_the_requests_it_read_and_leaves_later_ones_pending(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        version_publish(version=approved(ns_a, editor, reviewer, "First"), actor=reviewer)
    release = release_build(namespace_id=ns_a.pk).release
    with django_capture_on_commit_callbacks(execute=False):
        version_publish(version=approved(ns_a, editor, reviewer, "Second"), actor=reviewer)

    rows = list(BuildRequest.objects.filter(namespace=ns_a).order_by("serial").values_list("release_id", "built_at"))
    assert rows[0][0] == release.pk and rows[0][1] is not None
    assert rows[1] == (None, None)


def test_a_handed_over_build_waits_one_requeue_period_unless_it_was_never_handed_over(
    ns_a: Namespace, editor: Any, reviewer: Any, broker_down: None, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        version_publish(version=approved(ns_a, editor, reviewer), actor=reviewer)
    now = timezone.now()
    BuildRequest.objects.update(enqueued_at=now, attempts=1)
    running = ReleaseBuild.objects.create(namespace=ns_a, status=BuildStatus.RUNNING)

    assert build_requests_reconcile(now=now).building == ["alpha"]
    # A minute on, the build that was running counts as lost (its worker died): hand it over again.
    ReleaseBuild.objects.filter(pk=running.pk).update(started_at=now - timedelta(seconds=61))
    assert build_requests_reconcile(now=now + timedelta(seconds=61)).failed == ["alpha"]
    BuildRequest.objects.update(attempts=MAX_ATTEMPTS)
    assert build_requests_reconcile(now=now + timedelta(seconds=200)).stuck == ["alpha"]


def test_a_namespace_behind_its_content_without_a_request_gets_one(ns_a: Namespace, broker_down: None) -> None:
    Namespace.objects.filter(pk=ns_a.pk).update(content_serial=3, active_serial=1)

    report = build_requests_reconcile()

    assert report.failed == ["alpha"]
    assert list(BuildRequest.objects.values_list("reason", "serial")) == [("reconcile", 3)]


@pytest.mark.django_db(transaction=True)
def test_the_embedded_mode_reconciles_from_a_thread_of_the_serving_process(
    ns_a: Namespace, editor: Any, reviewer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr("knowledge.services.releases.render_release", broken)
    version_publish(version=approved(ns_a, editor, reviewer), actor=reviewer)  # its in-process build fails
    assert BuildRequest.objects.get(namespace=ns_a).built_at is None
    monkeypatch.undo()

    thread = threading.Thread(target=EmbeddedReconciler())  # as the telemetry thread runs it
    thread.start()
    thread.join()

    assert BuildRequest.objects.get(namespace=ns_a).built_at is not None
    assert Namespace.objects.get(pk=ns_a.pk).active_release is not None


def test_reconcile_builds_command_builds_in_process(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        version_publish(version=approved(ns_a, editor, reviewer), actor=reviewer)
    out = StringIO()

    call_command("reconcile_builds", "--in-process", stdout=out)
    call_command("reconcile_builds", stdout=out)

    assert out.getvalue().splitlines() == ["alpha: release #1 built and activated.", "no release pending"]


def test_the_admin_shows_a_pending_release(
    client: Any, ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        version_publish(version=approved(ns_a, editor, reviewer), actor=reviewer)
    client.force_login(reviewer)

    assert "release pending" in client.get("/admin/knowledge/namespace/").content.decode()
    assert ", release pending" in client.get("/admin/knowledge/entry/").content.decode()
    assert "pending: queued" not in client.get("/admin/knowledge/buildrequest/").content.decode()
    assert ">pending<" in client.get("/admin/knowledge/buildrequest/").content.decode()
    release_build(namespace_id=ns_a.pk)
    assert "up to date" in client.get("/admin/knowledge/namespace/").content.decode()
