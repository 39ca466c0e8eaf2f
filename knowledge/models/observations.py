"""What agents did with the knowledge: citation checks of their answers."""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from knowledge.models.namespace import Namespace
from knowledge.models.release import Release


class CitationCheck(models.Model):
    """One verified answer (POST /api/verify or MCP verify_citations): how many citations held up."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="citation_checks")
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="+")
    pack_etag = models.CharField(max_length=80, blank=True)
    channel = models.CharField(max_length=8)
    citations = models.PositiveIntegerField()
    valid = models.PositiveIntegerField(help_text="Citations without any problem.")
    problems = models.JSONField(default=dict, help_text="{problem code: count}.")
    client = models.CharField(max_length=16, blank=True, help_text="Keyed hash of the caller, never the address.")
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["namespace", "at"], name="citationcheck_namespace_at")]

    def __str__(self) -> str:
        return f"{self.valid}/{self.citations} valid"
