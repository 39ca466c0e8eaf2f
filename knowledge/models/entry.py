"""Entries (stable public IDs, tombstones) and their reviewed versions."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from knowledge.models.base import UndeletableModel
from knowledge.models.namespace import Category, Namespace, Sensitivity


class VersionState(models.TextChoices):
    DRAFT = "draft", "Draft"
    IN_REVIEW = "in_review", "In review"
    APPROVED = "approved", "Approved"
    PUBLISHED = "published", "Published"
    SUPERSEDED = "superseded", "Superseded"
    REJECTED = "rejected", "Rejected"
    WITHDRAWN = "withdrawn", "Withdrawn"


OPEN_STATES = (VersionState.DRAFT, VersionState.IN_REVIEW, VersionState.APPROVED)


class Entry(UndeletableModel):
    """A knowledge entry: its public ID never changes and is never reused, even after retirement."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="entries")
    public_id = models.CharField(max_length=32, editable=False)
    number = models.PositiveIntegerField(editable=False)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="entries")
    live_version = models.ForeignKey(
        "knowledge.EntryVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+", editable=False
    )
    retired_at = models.DateTimeField(null=True, blank=True, editable=False)
    retire_reason = models.CharField(max_length=500, blank=True, editable=False)
    replaced_by = models.CharField(max_length=32, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entries"
        ordering = ["namespace", "number"]
        constraints = [
            models.UniqueConstraint(fields=["namespace", "public_id"], name="entry_unique_public_id"),
            models.UniqueConstraint(fields=["namespace", "number"], name="entry_unique_number"),
        ]

    def __str__(self) -> str:
        return self.public_id

    @property
    def is_retired(self) -> bool:
        return self.retired_at is not None


class EntryVersion(UndeletableModel):
    """One version of an entry's content, moving through review (see knowledge.workflow)."""

    entry = models.ForeignKey(Entry, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(editable=False)
    state = models.CharField(max_length=16, choices=VersionState.choices, default=VersionState.DRAFT, editable=False)

    title = models.CharField(max_length=500)
    summary = models.TextField(blank=True, help_text="One or two sentences with the key words; agents route on it.")
    body = models.TextField(help_text="Markdown.")
    tags = models.JSONField(default=list, blank=True)
    confidence = models.DecimalField(
        max_digits=3,
        decimal_places=2,
        default=Decimal("0.90"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1"))],
    )
    links = models.JSONField(default=list, blank=True, help_text="Public IDs of related entries.")
    aliases = models.JSONField(
        default=list,
        blank=True,
        help_text="Alternate titles, also in another language; searched like the title, not shown to agents.",
    )
    updated = models.DateField(help_text="The date agents see as `updated`.")
    sensitivity = models.CharField(
        max_length=16,
        choices=Sensitivity.choices,
        default=Sensitivity.PUBLIC,
        help_text="Public entries go everywhere; internal and restricted ones only to API keys cleared for them.",
    )
    review_by = models.DateField(
        null=True,
        blank=True,
        help_text="Re-review due; past it the entry is marked stale. Empty: the category's default after approval.",
    )
    valid_until = models.DateField(
        null=True, blank=True, help_text="Past this date the entry leaves the packs and waits for a decision."
    )
    paths = models.JSONField(
        default=list,
        blank=True,
        help_text="Path globs of the files this entry applies to (src/api/**/*.py, *.sql); empty: everywhere. "
        "A request with paths loads it first when one matches and leaves it out when none does.",
    )
    overrides = models.CharField(
        max_length=32,
        blank=True,
        help_text="The ID of a base namespace's entry this one replaces (e.g. AC-101): only this one is served.",
    )
    tokens = models.PositiveIntegerField(editable=False, help_text="Seed §4 estimate of title+summary+body.")
    content_hash = models.CharField(max_length=64, editable=False)

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="authored_versions"
    )
    # Everyone who wrote any of this content: the draft's creator and every editor who saved it (four eyes).
    contributors = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="reviewed_versions"
    )
    review_note = models.TextField(blank=True)
    # The safety scan of the submitted content (knowledge.services.safety), as Finding.as_dict() items.
    findings = models.JSONField(default=list, blank=True, editable=False)
    publish_at = models.DateTimeField(null=True, blank=True, help_text="Scheduled go-live, once approved.")

    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True, editable=False)
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    published_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Optimistic locking: every content save bumps it; a save based on a stale value is refused.
    lock_version = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["entry", "-number"]
        get_latest_by = "number"
        constraints = [
            models.UniqueConstraint(fields=["entry", "number"], name="version_unique_number"),
            models.UniqueConstraint(
                fields=["entry"],
                condition=models.Q(state=VersionState.PUBLISHED),
                name="version_one_published_per_entry",
            ),
            models.UniqueConstraint(
                fields=["entry"],
                condition=models.Q(state__in=OPEN_STATES),
                name="version_one_open_per_entry",
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1),
                name="version_confidence_0_1",
            ),
            models.CheckConstraint(condition=models.Q(state__in=VersionState.values), name="version_state_known"),
            models.CheckConstraint(
                condition=models.Q(sensitivity__in=Sensitivity.values), name="version_sensitivity_known"
            ),
        ]
        indexes = [
            models.Index(fields=["state", "publish_at"], name="version_state_publish_at"),
            # An import finds the content it already holds by hash (services.imports._latest_hashes).
            models.Index(fields=["content_hash"], name="version_content_hash"),
        ]

    def __str__(self) -> str:
        return f"{self.entry.public_id} v{self.number}"
