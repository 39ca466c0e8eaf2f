"""The A2A task store of one namespace over the ``A2ATask`` model (A2A v0.3.0 §7.3 tasks/get, §7.4 tasks/cancel).

While the database fails, ``message/send`` still answers from the release in memory: its task is
answered but not stored (``tasks/get`` cannot find it later), and nothing is stored to count against
the quotas. Reading a stored task needs the database and fails as any read of it does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest
from django.utils import timezone

from knowledge.models import A2ATask
from knowledge.retrieval.contract.records import PUBLIC, SENSITIVITY_LEVELS, clears
from knowledge.security_events import A2A_QUOTA, security_client_hash, security_event
from knowledge.services import a2a_tasks
from knowledge.services.a2a_tasks import TaskLimits, a2a_task_limits
from mcp_bridge.ports import TaskQuotaError

logger = logging.getLogger(__name__)


def task_retention_seconds() -> int:
    """``EVERGREEN_A2A_TASK_RETENTION_SECONDS``, 24 hours by default; stated in the agent card."""
    return a2a_task_limits().retention_seconds


class DatabaseTaskStore:
    """Tasks of one namespace, kept ``retention_seconds`` after their last save (``ports.TaskStore``).

    The database, not Redis with a TTL: it is there in every deployment (SQLite in the embedded mode
    has no Redis), and any web worker can answer ``tasks/get`` for a task another one created. A task
    past its retention loads as None whether or not it was pruned yet. New tasks count against the
    client's and the namespace's quotas (knowledge.services.a2a_tasks); ``client`` is the address the
    rate limiter counts, stored only as the security log's keyed hash. ``clearance`` is the caller's
    (``Gate.clearance``): a task is stored with it and loads only for a caller cleared as far, so a task
    above the caller's clearance is as unknown as one never made (tasks stored before clearances were
    recorded read as restricted).
    """

    def __init__(
        self,
        *,
        namespace_id: int,
        client: str = "",
        limits: TaskLimits | None = None,
        request: HttpRequest | None = None,
        namespace: str | None = None,
        now: Callable[[], datetime] = timezone.now,
        retention_seconds: int | None = None,
        clearance: str = PUBLIC,
    ) -> None:
        limits = limits or a2a_task_limits()
        if retention_seconds is not None:
            limits = TaskLimits(retention_seconds, limits.client_bytes, limits.namespace_bytes)
        self.namespace_id = namespace_id
        self.limits = limits
        self.retention_seconds = limits.retention_seconds
        self.client = security_client_hash(client) if client else ""
        self._request = request
        self._namespace = namespace
        self._now = now
        self.clearance = clearance

    def admit(self) -> None:
        try:
            a2a_tasks.a2a_task_admit(
                namespace_id=self.namespace_id, client=self.client, limits=self.limits, now=self._now()
            )
        except DatabaseError as error:
            logger.warning("A2A task quotas not checked, the database does not answer: %s", error)
        except a2a_tasks.TaskQuotaError as error:
            security_event(A2A_QUOTA, request=self._request, namespace=self._namespace, reason=f"{error.scope}_quota")
            raise TaskQuotaError(str(error), scope=error.scope, retry_after=error.retry_after) from error

    def save(self, task: Mapping[str, Any]) -> None:
        try:
            a2a_tasks.a2a_task_save(
                namespace_id=self.namespace_id,
                task=dict(task),
                client=self.client,
                limits=self.limits,
                now=self._now(),
                clearance=self.clearance,
            )
        except DatabaseError as error:
            logger.warning("A2A task %s answered but not stored, the database does not answer: %s", task["id"], error)

    def load(self, task_id: str) -> dict[str, Any] | None:
        cutoff = self._now() - timedelta(seconds=self.retention_seconds)
        readable = [level for level in SENSITIVITY_LEVELS if clears(self.clearance, level)]
        found = (
            A2ATask.objects.filter(
                namespace_id=self.namespace_id, task_id=task_id, saved_at__gte=cutoff, clearance__in=readable
            )
            .values_list("task", flat=True)
            .first()
        )
        return dict(found) if isinstance(found, dict) else None
