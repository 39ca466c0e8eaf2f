"""The build outbox: a change asks for its release build in its own transaction; the broker comes after.

`release_request_build` bumps the namespace's content serial and writes a BuildRequest row inside the
caller's transaction. Once that commits, the build is handed to Celery; when the broker (or the cache
that coalesces bursts) is down, the failure is logged and recorded on the row, and the change itself
stands and answers normally. `build_requests_reconcile` hands over again every namespace whose
requests no release has satisfied: requests never handed over, and requests handed over more than
EVERGREEN_BUILD_REQUEUE_SECONDS ago with no build running since (a worker killed mid-build). It runs
from Celery beat, when a worker starts, from `manage.py reconcile_builds`, and in the embedded mode
from a thread of the serving process. Builds are idempotent, so a duplicate costs one "unchanged" build.

Bursts coalesce without a long wait: a handed-over build waits EVERGREEN_BUILD_COALESCE_SECONDS (a
tenth of a second) and, until it starts, absorbs every later request of its namespace (the pending
key); once it starts, later requests queue one next build, which absorbs the rest while the first
runs. So a burst of any length costs at most two builds, and a lone publish waits only the debounce.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, F, Max, Q
from django.utils import timezone

from knowledge.models import BuildRequest, BuildStatus, Namespace, Release, ReleaseBuild
from knowledge.telemetry.flusher import flusher

logger = logging.getLogger(__name__)

PENDING_KEY = "release-build-pending:{namespace_id}"
PENDING_TTL_SECONDS = 120
# After this many hand-overs without a release, the reconciler stops and the admin shows the request as stuck.
MAX_ATTEMPTS = 20
ERROR_LENGTH = 300


def content_serial_bump(*, namespace: Namespace) -> int:
    """Mark the namespace's content as changed (in the caller's transaction); returns the new serial."""
    Namespace.objects.filter(pk=namespace.pk).update(content_serial=F("content_serial") + 1)
    return Namespace.objects.values_list("content_serial", flat=True).get(pk=namespace.pk)


def release_request_build(*, namespace: Namespace, reason: str) -> BuildRequest:
    """Record that the namespace's content changed and needs a release; it is handed to Celery on commit."""
    serial = content_serial_bump(namespace=namespace)
    return build_request_record(namespace=namespace, serial=serial, reason=reason)


def build_request_record(*, namespace: Namespace, serial: int, reason: str) -> BuildRequest:
    """The outbox row for content serial `serial` (already bumped by the caller), handed over on commit."""
    request = BuildRequest.objects.create(namespace_id=namespace.pk, serial=serial, reason=reason)
    transaction.on_commit(partial(build_enqueue, namespace.pk))
    return request


def build_enqueue(namespace_id: int, *, coalesce: bool = True) -> bool:
    """Hand a build of the namespace to Celery; False, logged and recorded, when the broker or cache is down.

    Never raises: it runs after the change committed, and its caller's answer must not depend on it.
    With `coalesce`, a build already queued and not started absorbs this request (one build per burst).
    """
    from knowledge.tasks import release_build_task  # noqa: PLC0415  # the tasks module imports this one

    key = PENDING_KEY.format(namespace_id=namespace_id)
    try:
        if coalesce and not cache.add(key, 1, timeout=PENDING_TTL_SECONDS):
            _mark_handed_over(namespace_id, first_only=True)
            return True
        delay = settings.EVERGREEN.build_coalesce_seconds if coalesce else 0
        release_build_task.apply_async(args=[namespace_id], countdown=delay or None)
    except Exception as error:  # noqa: BLE001  # the broker or Redis is down: the reconciler hands it over later
        logger.warning("Could not queue the release build of namespace %s: %s", namespace_id, error)
        _forget_pending_key(key)
        message = f"{type(error).__name__}: {error}"[:ERROR_LENGTH]
        BuildRequest.objects.filter(namespace_id=namespace_id, built_at__isnull=True).update(last_error=message)
        return False
    _mark_handed_over(namespace_id, first_only=False)
    return True


def _forget_pending_key(key: str) -> None:
    try:
        cache.delete(key)
    except Exception:  # noqa: BLE001  # the cache is down too; the key expires on its own
        logger.info("Could not clear %s; it expires in %ss", key, PENDING_TTL_SECONDS)


def build_pending_key_clear(namespace_id: int) -> None:
    """A build is starting: later requests queue a build of their own instead of riding along."""
    _forget_pending_key(PENDING_KEY.format(namespace_id=namespace_id))


def _mark_handed_over(namespace_id: int, *, first_only: bool) -> None:
    from knowledge.tasks import release_build_task  # noqa: PLC0415  # the tasks module imports this one

    pending = BuildRequest.objects.filter(namespace_id=namespace_id, built_at__isnull=True)
    if release_build_task.app.conf.task_always_eager:
        # In-process, the build has already run: a request still pending failed, and is due again.
        pending.update(attempts=F("attempts") + 1)
        return
    if first_only:
        pending = pending.filter(enqueued_at__isnull=True)
    pending.update(enqueued_at=timezone.now(), attempts=F("attempts") + 1, last_error="")


def build_requests_satisfy(*, namespace_id: int, serial: int, release: Release, now: datetime) -> int:
    """Mark the requests up to `serial` as built by `release` (in the build's transaction)."""
    return BuildRequest.objects.filter(namespace_id=namespace_id, built_at__isnull=True, serial__lte=serial).update(
        built_at=now, release=release
    )


def build_requests_ask_rollback(*, namespace_id: int, serial: int) -> bool:
    """Does a pending request up to `serial` come from a rollback (its activation is announced as one)?"""
    return BuildRequest.objects.filter(
        namespace_id=namespace_id, built_at__isnull=True, serial__lte=serial, reason="rollback"
    ).exists()


@dataclass
class ReconcileReport:
    handed_over: list[str] = field(default_factory=list)  # namespaces whose build was queued now
    failed: list[str] = field(default_factory=list)  # the broker refused them; tried again next time
    building: list[str] = field(default_factory=list)  # a build is queued or running
    stuck: list[str] = field(default_factory=list)  # MAX_ATTEMPTS hand-overs without a release

    def describe(self) -> str:
        parts = [
            f"{label}: {', '.join(slugs)}"
            for label, slugs in (
                ("queued", self.handed_over),
                ("broker refused", self.failed),
                ("being built", self.building),
                ("stuck", self.stuck),
            )
            if slugs
        ]
        return "; ".join(parts) or "no release pending"


def build_requests_reconcile(*, now: datetime | None = None) -> ReconcileReport:
    """Hand over again every namespace with a request no release satisfied and no build under way."""
    now = now or timezone.now()
    grace = now - timedelta(seconds=settings.EVERGREEN.build_requeue_seconds)
    _record_unrequested_changes()
    pending = (
        BuildRequest.objects.filter(built_at__isnull=True)
        .values("namespace_id", "namespace__slug")
        .annotate(
            fresh=Count("pk", filter=Q(enqueued_at__isnull=True)),
            last_handed=Max("enqueued_at"),
            attempts=Max("attempts"),
        )
        .order_by("namespace__slug")
    )
    running = set(
        ReleaseBuild.objects.filter(status=BuildStatus.RUNNING, started_at__gt=grace).values_list(
            "namespace_id", flat=True
        )
    )
    report = ReconcileReport()
    for row in pending:
        slug, namespace_id = row["namespace__slug"], row["namespace_id"]
        if row["attempts"] >= MAX_ATTEMPTS:
            report.stuck.append(slug)
        elif not row["fresh"] and (namespace_id in running or row["last_handed"] > grace):
            report.building.append(slug)
        elif build_enqueue(namespace_id, coalesce=False):
            report.handed_over.append(slug)
        else:
            report.failed.append(slug)
    if report.handed_over or report.failed or report.stuck:
        logger.info("Release builds reconciled: %s", report.describe())
    return report


def _record_unrequested_changes() -> None:
    """A namespace serving older content than it holds, with no request (e.g. changed before the outbox existed)."""
    waiting = BuildRequest.objects.filter(built_at__isnull=True).values("namespace_id")
    behind = Namespace.objects.filter(content_serial__gt=F("active_serial")).exclude(pk__in=waiting)
    for namespace in behind:
        BuildRequest.objects.create(namespace=namespace, serial=namespace.content_serial, reason="reconcile")


def build_requests_pending(*, namespace: Namespace) -> bool:
    """Published, release pending: the namespace holds content its active release was not built from."""
    return namespace.content_serial > namespace.active_serial


class EmbeddedReconciler:
    """The embedded mode has no beat and no worker: the serving process's telemetry thread reconciles.

    Installed by the WSGI application (runserver, gunicorn), so commands and workers never run it;
    it does nothing in the process's last flush at exit, on the main thread.
    """

    def __init__(self) -> None:
        self._last = 0.0

    def __call__(self) -> None:
        from knowledge.tasks import release_build_task  # noqa: PLC0415  # the tasks module imports this one

        if not release_build_task.app.conf.task_always_eager or threading.current_thread() is threading.main_thread():
            return
        if time.monotonic() - self._last < settings.EVERGREEN.build_reconcile_seconds:
            return
        self._last = time.monotonic()
        try:
            build_requests_reconcile()
        finally:
            connection.close()  # this thread's own connection


def embedded_reconciler_install() -> None:
    """Called by the WSGI application: in the embedded mode, start reconciling in this process."""
    from knowledge.tasks import release_build_task  # noqa: PLC0415  # the tasks module imports this one

    if release_build_task.app.conf.task_always_eager:
        flusher.register(embedded_reconciler)
        flusher.ensure_started()


embedded_reconciler = EmbeddedReconciler()
