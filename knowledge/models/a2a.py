"""A2A v0.3.0 tasks kept per namespace for a stated retention period (tasks/get, tasks/cancel)."""

from __future__ import annotations

from django.db import models

from knowledge.models.namespace import Namespace, Sensitivity


class A2ATask(models.Model):
    """One A2A ``Task`` as sent on the wire, readable by ``tasks/get`` until its retention runs out.

    Stored in the database rather than in Redis with a TTL: the embedded mode has no Redis, and a
    per-process cache would lose the task whenever ``tasks/get`` lands on another web worker. Expiry
    is enforced when a task is read (``saved_at`` + retention), so correctness never waits for the
    pruning that happens on writes and hourly (knowledge.services.a2a_tasks holds the quotas).
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="a2a_tasks")
    task_id = models.CharField(max_length=64)
    task = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)
    saved_at = models.DateTimeField(db_index=True, help_text="Last save; the retention period counts from here.")
    client = models.CharField(
        max_length=32, default="", help_text="Keyed hash of the client that created it (the security log's hash)."
    )
    size = models.PositiveIntegerField(default=0, help_text="Bytes of the stored JSON, counted against the quotas.")
    # Tasks stored before this field existed read as restricted: nothing proves what they hold.
    clearance = models.CharField(
        max_length=16,
        choices=Sensitivity.choices,
        default=Sensitivity.RESTRICTED,
        help_text="The clearance of the caller that made it: only callers cleared as far read it back.",
    )

    class Meta:
        verbose_name = "A2A task"
        constraints = (models.UniqueConstraint(fields=["namespace", "task_id"], name="a2atask_unique_id"),)
        indexes = (models.Index(fields=["namespace", "saved_at"], name="a2atask_live"),)

    def __str__(self) -> str:
        return self.task_id
