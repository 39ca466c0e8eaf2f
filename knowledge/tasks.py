"""Celery tasks: thin wrappers that call services; safe to run twice."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_init, worker_process_init, worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from knowledge.models import Namespace
from knowledge.selectors.release_files import release_files_sweep
from knowledge.services.a2a_tasks import a2a_task_limits, a2a_tasks_prune
from knowledge.services.actors import system_actor
from knowledge.services.build_cache import build_cache_sweep
from knowledge.services.build_queue import build_requests_reconcile
from knowledge.services.freshness import freshness_sweep
from knowledge.services.gaps import gaps_digest
from knowledge.services.heap import heap_mmap_threshold_set
from knowledge.services.release_storage import releases_prune
from knowledge.services.releases import ConcurrentBuildError, release_build
from knowledge.services.request_log import request_log_drain, request_logs_prune
from knowledge.services.versions import versions_publish_due
from knowledge.services.webhook_delivery import webhook_attempt, webhooks_due

# A retry the broker lost (a worker killed between attempts) is picked up by the sweep after this.
WEBHOOK_SWEEP_GRACE_SECONDS = 120


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(OperationalError, InterfaceError, ConcurrentBuildError, ConnectionError),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=True,
    max_retries=8,
)
def release_build_task(self, namespace_id: int) -> int:
    """Build and activate the namespace's release; returns the active release's id."""
    outcome = release_build(namespace_id=namespace_id, task_id=self.request.id or "")
    return outcome.release.pk


@shared_task(acks_late=True)
def release_builds_reconcile_task() -> str:
    """Queue the builds no release satisfied yet (Celery beat, and when a worker starts); says what it did."""
    return build_requests_reconcile().describe()


@worker_init.connect
@worker_process_init.connect
def _heap_mmap_threshold_when_a_worker_starts(sender: Any = None, **kwargs: Any) -> None:
    """Builds run here: their large buffers are mapped and unmapped, not left free in the heap (issue 18 §3).
    The pool's forked processes inherit it from the worker; set again in each for any that were not forked."""
    heap_mmap_threshold_set()


@worker_init.connect
@worker_process_init.connect
def _partials_sweep_when_a_worker_starts(sender: Any = None, **kwargs: Any) -> None:
    """A pool process killed while writing a build cache or a release file (the OOM killer, a time limit)
    left its temporary file: the process that replaces it removes it (knowledge.partial_files)."""
    build_cache_sweep()
    release_files_sweep()


@worker_ready.connect
def _reconcile_when_a_worker_starts(sender: Any = None, **kwargs: Any) -> None:
    """A worker that starts (after a crash, a deploy, a broker outage) first picks up what was left pending,
    and looks again once a build handed over just before the crash stops counting as under way: without
    beat (`make worker` alone) nothing else would hand that build over again."""
    release_builds_reconcile_task.delay()
    release_builds_reconcile_task.apply_async(countdown=settings.EVERGREEN.build_requeue_seconds + 1)


@shared_task(acks_late=True)
def versions_publish_due_task() -> int:
    """Publish approved versions whose `publish at` time has come (Celery beat, every minute)."""
    return versions_publish_due()


@shared_task(acks_late=True)
def freshness_sweep_task() -> int:
    """Rebuild namespaces where a live entry turned stale or expired since their release (beat, hourly)."""
    return freshness_sweep()


@shared_task(acks_late=True)
def releases_prune_task() -> str:
    """Drop the files of releases outside the retention policy, in every namespace (Celery beat, daily)."""
    reports = [
        releases_prune(namespace=namespace, keep=settings.EVERGREEN.release_keep, actor=system_actor())
        for namespace in Namespace.objects.order_by("slug")
    ]
    return "; ".join(report.describe() for report in reports if report.pruned) or "nothing to prune"


@shared_task(acks_late=True)
def a2a_tasks_prune_task() -> int:
    """Delete A2A tasks past their retention in every namespace (Celery beat, hourly); returns how many."""
    return a2a_tasks_prune(limits=a2a_task_limits(), now=timezone.now())


@shared_task(bind=True, acks_late=True, max_retries=None)
def webhook_deliver_task(self, delivery_id: int) -> str:
    """One attempt at a webhook notice; a failure schedules the next attempt with backoff (Celery retry).

    In-process (embedded mode, no broker) only the first attempt runs here; later attempts are left
    to the sweep below, so a publish never waits on a receiver's retries.
    """
    outcome = webhook_attempt(delivery_id=delivery_id)
    if outcome.retry_in is not None and not self.request.is_eager:
        raise self.retry(countdown=outcome.retry_in)
    return outcome.status


@shared_task(acks_late=True)
def webhooks_sweep_task() -> int:
    """Queue notices whose next attempt is overdue (Celery beat, every minute); returns how many."""
    grace = 0 if webhook_deliver_task.app.conf.task_always_eager else WEBHOOK_SWEEP_GRACE_SECONDS
    due = webhooks_due(grace_seconds=grace)
    for delivery_id in due:
        webhook_deliver_task.delay(delivery_id)
    return len(due)


@shared_task(acks_late=True, autoretry_for=(OperationalError, InterfaceError), retry_backoff=2, max_retries=5)
def request_log_drain_task() -> int:
    """Write the request-log batches waiting in Redis (Celery beat, every few seconds); returns rows written."""
    return request_log_drain()


@shared_task(acks_late=True)
def request_logs_prune_task() -> int:
    """Delete request-log rows past their retention (Celery beat, daily); returns how many."""
    return request_logs_prune()


@shared_task(acks_late=True)
def gaps_digest_task() -> int:
    """E-mail each namespace's reviewers its top knowledge gaps of the week (Celery beat, Mondays)."""
    return gaps_digest()
