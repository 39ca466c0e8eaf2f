"""A2A tasks kept for a stated retention period, within per-client and per-namespace storage quotas.

Anonymous ``message/send`` stores a task that ``tasks/get`` can read back for the retention period
(24 h by default). Without a bound, one client at the read rate limit could store megabytes a minute
in every public namespace; the quotas cap the bytes of live (unexpired) tasks per client and per
namespace. They are checked before a task runs, so a refused request has no side effect (a feedback
submission is not stored twice when the client retries later); the one task that crosses a limit is
still stored, so a quota can be exceeded by at most one task per concurrent request.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final, Literal

from django.conf import settings
from django.db.models import Min, Q, Sum
from django.db.models.functions import Coalesce

from knowledge.errors import ServiceError
from knowledge.models import A2ATask, Sensitivity

QUOTA_EXCEEDED: Final = (
    "Too much A2A task storage in use {scope}: at most {limit} bytes of tasks are kept for "
    "{retention} seconds. Retry after {retry_after} seconds, when older tasks expire."
)
QuotaScope = Literal["client", "namespace"]
SCOPE_WORDS: Final = {"client": "by this client in this namespace", "namespace": "in this namespace"}


@dataclass(frozen=True, slots=True)
class TaskLimits:
    retention_seconds: int
    client_bytes: int
    namespace_bytes: int


def a2a_task_limits() -> TaskLimits:
    """``EVERGREEN_A2A_TASK_RETENTION_SECONDS``, ``…_QUOTA_CLIENT_BYTES`` and ``…_QUOTA_NAMESPACE_BYTES``."""
    values = settings.EVERGREEN
    return TaskLimits(
        retention_seconds=values.a2a_task_retention_seconds,
        client_bytes=values.a2a_task_quota_client_bytes,
        namespace_bytes=values.a2a_task_quota_namespace_bytes,
    )


class TaskQuotaError(ServiceError):
    """A new task would go over a storage quota; ``retry_after`` is when the scope's oldest task expires."""

    code = "a2a_task_quota"

    def __init__(self, *, scope: QuotaScope, limit: int, retention: int, retry_after: int) -> None:
        super().__init__(
            QUOTA_EXCEEDED.format(scope=SCOPE_WORDS[scope], limit=limit, retention=retention, retry_after=retry_after)
        )
        self.scope = scope
        self.limit = limit
        self.retry_after = retry_after


def _live(*, namespace_id: int, limits: TaskLimits, now: datetime) -> Any:
    return A2ATask.objects.filter(
        namespace_id=namespace_id, saved_at__gte=now - timedelta(seconds=limits.retention_seconds)
    )


def a2a_task_admit(*, namespace_id: int, client: str, limits: TaskLimits, now: datetime) -> None:
    """Raise TaskQuotaError when the client's or the namespace's live tasks already fill their quota.

    One aggregate over the namespace's live tasks (index on namespace and saved_at).
    """
    mine = Q(client=client)
    used = _live(namespace_id=namespace_id, limits=limits, now=now).aggregate(
        client_used=Coalesce(Sum("size", filter=mine), 0),
        namespace_used=Coalesce(Sum("size"), 0),
        client_oldest=Min("saved_at", filter=mine),
        namespace_oldest=Min("saved_at"),
    )
    scopes: tuple[tuple[QuotaScope, int], ...] = (
        ("client", limits.client_bytes),
        ("namespace", limits.namespace_bytes),
    )
    for scope, limit in scopes:
        if used[f"{scope}_used"] >= limit:
            expires = used[f"{scope}_oldest"] + timedelta(seconds=limits.retention_seconds)
            retry_after = max(1, math.ceil((expires - now).total_seconds()))
            raise TaskQuotaError(scope=scope, limit=limit, retention=limits.retention_seconds, retry_after=retry_after)


def a2a_task_save(
    *,
    namespace_id: int,
    task: dict[str, Any],
    client: str,
    limits: TaskLimits,
    now: datetime,
    clearance: str = Sensitivity.PUBLIC,
) -> A2ATask:
    """Insert or replace the task under ``task["id"]`` (its retention restarts) and prune expired tasks.

    ``clearance`` is the creating caller's; a replaced task keeps the one it was made with.
    """
    a2a_tasks_prune(namespace_id=namespace_id, limits=limits, now=now)
    size = len(json.dumps(task, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    defaults = {"task": task, "saved_at": now, "size": size, "client": client}
    stored, _ = A2ATask.objects.update_or_create(
        namespace_id=namespace_id,
        task_id=str(task["id"]),
        defaults=defaults,
        create_defaults={**defaults, "clearance": clearance},
    )
    return stored


def a2a_tasks_prune(*, limits: TaskLimits, now: datetime, namespace_id: int | None = None) -> int:
    """Delete tasks past their retention, of one namespace or of all; returns how many were deleted."""
    expired = A2ATask.objects.filter(saved_at__lt=now - timedelta(seconds=limits.retention_seconds))
    if namespace_id is not None:
        expired = expired.filter(namespace_id=namespace_id)
    deleted, _ = expired.delete()
    return deleted
