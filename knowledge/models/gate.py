"""The publish gate's record of a release: the golden questions before and after, and who let it through."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from knowledge.models.release import Release


class GateStatus(models.TextChoices):
    PASSED = "passed", "Passed"
    HELD = "held", "Held: golden questions regressed"
    OVERRIDDEN = "overridden", "Held, then activated by a reviewer"
    SKIPPED = "skipped", "Not checked (no golden questions or no serving release)"


class ReleaseGate(models.Model):
    """The latest golden-question check of a release against the release that served when it was built.

    A held release is built and kept but not served; a reviewer may activate it with a written
    reason (`decided_by`, `reason`), which is also in the audit trail.
    """

    release = models.OneToOneField(Release, on_delete=models.PROTECT, related_name="gate")
    status = models.CharField(max_length=16, choices=GateStatus.choices)
    compared_with = models.ForeignKey(
        Release, null=True, blank=True, on_delete=models.PROTECT, related_name="+", help_text="The serving release."
    )
    report = models.JSONField(default=dict, blank=True, help_text="Per question: matched and packed, before and after.")
    regressions = models.PositiveIntegerField(default=0)
    checked_at = models.DateTimeField()
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-checked_at"]

    def __str__(self) -> str:
        return f"{self.release} gate: {self.status}"
