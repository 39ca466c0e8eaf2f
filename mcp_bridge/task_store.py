"""The A2A task store of one namespace over the ``A2ATask`` model (A2A v0.3.0 §7.3 tasks/get, §7.4 tasks/cancel)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from knowledge.models import A2ATask


def task_retention_seconds() -> int:
    """``EVERGREEN_A2A_TASK_RETENTION_SECONDS``, 24 hours by default; stated in the agent card."""
    return settings.EVERGREEN.a2a_task_retention_seconds


class DatabaseTaskStore:
    """Tasks of one namespace, kept ``retention_seconds`` after their last save (``ports.TaskStore``).

    The database, not Redis with a TTL: it is there in every deployment (SQLite in the embedded mode
    has no Redis), and any web worker can answer ``tasks/get`` for a task another one created. A task
    past its retention loads as None whether or not it was pruned yet; saving prunes the namespace's
    expired tasks, so the table stays as small as one retention period of traffic.
    """

    def __init__(
        self, *, namespace_id: int, retention_seconds: int, now: Callable[[], datetime] = timezone.now
    ) -> None:
        self.namespace_id = namespace_id
        self.retention_seconds = retention_seconds
        self._now = now

    def _cutoff(self) -> datetime:
        return self._now() - timedelta(seconds=self.retention_seconds)

    def save(self, task: Mapping[str, Any]) -> None:
        A2ATask.objects.filter(namespace_id=self.namespace_id, saved_at__lt=self._cutoff()).delete()
        A2ATask.objects.update_or_create(
            namespace_id=self.namespace_id,
            task_id=str(task["id"]),
            defaults={"task": dict(task), "saved_at": self._now()},
        )

    def load(self, task_id: str) -> dict[str, Any] | None:
        found = (
            A2ATask.objects.filter(namespace_id=self.namespace_id, task_id=task_id, saved_at__gte=self._cutoff())
            .values_list("task", flat=True)
            .first()
        )
        return dict(found) if isinstance(found, dict) else None
