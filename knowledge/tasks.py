"""Celery tasks: thin wrappers that call services; safe to run twice."""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from knowledge.services.a2a_tasks import a2a_task_limits, a2a_tasks_prune
from knowledge.services.releases import ConcurrentBuildError, release_build
from knowledge.services.versions import versions_publish_due


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
def versions_publish_due_task() -> int:
    """Publish approved versions whose `publish at` time has come (Celery beat, every minute)."""
    return versions_publish_due()


@shared_task(acks_late=True)
def a2a_tasks_prune_task() -> int:
    """Delete A2A tasks past their retention in every namespace (Celery beat, hourly); returns how many."""
    return a2a_tasks_prune(limits=a2a_task_limits(), now=timezone.now())
