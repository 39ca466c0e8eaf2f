"""What agents did with the knowledge: their requests, the gaps those reveal, citation checks of their answers."""

from __future__ import annotations

from django.conf import settings
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


class RequestLog(models.Model):
    """One agent request as recorded by the request log: what was asked, what came back, how fast.

    Never the client's address or key: `client` is the security log's keyed hash. Rows older than
    EVERGREEN_REQUEST_LOG_RETENTION_DAYS are deleted daily.
    """

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="request_logs")
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField()
    channel = models.CharField(max_length=8)
    route = models.CharField(max_length=16)
    status = models.PositiveSmallIntegerField(default=200)
    topic = models.CharField(max_length=500, blank=True)
    budget = models.PositiveIntegerField(null=True, blank=True)
    category = models.CharField(max_length=32, null=True, blank=True)
    limit = models.PositiveSmallIntegerField(null=True, blank=True)
    matched = models.BooleanField(null=True)
    hit_count = models.PositiveIntegerField(null=True, blank=True)
    returned = models.JSONField(default=list, help_text="The entry IDs in the answer, in order.")
    omitted = models.JSONField(default=list, help_text="Matching entry IDs left out for budget.")
    used_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_us = models.PositiveIntegerField(default=0)
    client = models.CharField(max_length=16, blank=True, help_text="Keyed hash of the caller.")
    request_id = models.CharField(max_length=64, blank=True)
    etag = models.CharField(max_length=80, blank=True, help_text="The answer's ETag: replay proves it.")
    params = models.JSONField(default=dict, blank=True, help_text="What else replay needs (entry ID, version).")
    clearance = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="The clearance the answer was served with, when above public (empty: public, as every row "
        "logged before clearances were recorded); replay renders that view.",
    )

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["namespace", "at"], name="requestlog_namespace_at"),
            models.Index(fields=["at"], name="requestlog_at"),
        ]

    def __str__(self) -> str:
        return f"{self.route} {self.topic[:40]!r} ({self.channel})"


class GapStatus(models.TextChoices):
    OPEN = "open", "Open"
    DRAFTED = "drafted", "A draft was opened"
    DISMISSED = "dismissed", "Dismissed"


class KnowledgeGap(models.Model):
    """Topics agents asked that no entry answered (matched=false), grouped by their informative terms."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="gaps")
    key = models.CharField(max_length=200)
    terms = models.JSONField(default=list)
    example = models.CharField(max_length=500, blank=True, help_text="The latest topic of the group.")
    topics = models.JSONField(default=list, help_text="Up to five distinct topics, latest first.")
    count = models.PositiveIntegerField(default=0)
    weak = models.PositiveIntegerField(default=0, help_text="How many got weak hits (the rest: none).")
    channels = models.JSONField(default=list)
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    status = models.CharField(max_length=16, choices=GapStatus.choices, default=GapStatus.OPEN)
    status_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-count", "-last_seen"]
        constraints = [models.UniqueConstraint(fields=["namespace", "key"], name="gap_unique_key")]

    def __str__(self) -> str:
        return self.example or self.key
