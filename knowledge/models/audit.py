"""The audit trail: every state transition, retirement, rollback, import and change of a namespace's settings."""

from __future__ import annotations

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

from knowledge.models.base import UndeletableModel
from knowledge.models.namespace import Namespace


class AuditRecord(UndeletableModel):
    """Who did what, when, from which state to which, and why. Append-only."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="audit_records")
    entry = models.ForeignKey("knowledge.Entry", null=True, blank=True, on_delete=models.PROTECT, related_name="audit")
    version = models.ForeignKey(
        "knowledge.EntryVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="audit"
    )
    text_version = models.ForeignKey(
        "knowledge.TextVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="audit"
    )
    release = models.ForeignKey(
        "knowledge.Release", null=True, blank=True, on_delete=models.PROTECT, related_name="audit"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    action = models.CharField(max_length=32)
    from_state = models.CharField(max_length=16, blank=True)
    to_state = models.CharField(max_length=16, blank=True)
    # A changed setting or membership: which field, and its value before and after (JSON).
    field = models.CharField(max_length=64, blank=True)
    old_value = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    new_value = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} {self.from_state}→{self.to_state}"
