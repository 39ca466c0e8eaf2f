"""Reviewed texts: everything agents read beside entries (prompt packs, doc pages, the profile, themes, bases).

One text is one (namespace, kind, key); its content changes only through versions that follow the
same workflow and four-eyes rule as entry versions. Publishing a version copies its content into the
row agents are served from (a DocPage, a PromptPack, the namespace's profile fields, its NamespaceBase
rows; a theme is read from its live version), so nothing else writes those rows and nothing
unreviewed reaches a release.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from knowledge.models.base import UndeletableModel
from knowledge.models.entry import OPEN_STATES, VersionState
from knowledge.models.namespace import Namespace


class TextKind(models.TextChoices):
    PROFILE = "profile", "Namespace profile (title, summary, contact, rules, FAQ)"
    DOC = "doc", "Doc page"
    PROMPT = "prompt", "Prompt pack"
    THEME = "theme", "Theme (a title, a short description and the entries in it)"
    BASES = "bases", "Base namespaces (the layers this namespace builds on, in priority order)"


class ReviewedText(models.Model):
    """A text agents read, identified by its kind and key (a doc slug, a prompt scenario; '' for the profile)."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="texts")
    kind = models.CharField(max_length=16, choices=TextKind.choices)
    key = models.SlugField(
        max_length=80, blank=True, help_text="Doc page slug or prompt scenario; empty for the profile."
    )
    live_version = models.ForeignKey(
        "knowledge.TextVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+", editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["namespace", "kind", "key"]
        constraints = [models.UniqueConstraint(fields=["namespace", "kind", "key"], name="text_unique_key")]

    def __str__(self) -> str:
        return f"{self.namespace.slug}/{self.kind}/{self.key}" if self.key else f"{self.namespace.slug}/{self.kind}"


class TextVersion(UndeletableModel):
    """One version of a text's content (a JSON object whose fields depend on the kind)."""

    text = models.ForeignKey(ReviewedText, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(editable=False)
    state = models.CharField(max_length=16, choices=VersionState.choices, default=VersionState.DRAFT, editable=False)
    content = models.JSONField(default=dict)
    content_hash = models.CharField(max_length=64, editable=False)

    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="authored_text_versions"
    )
    # Everyone who wrote any of this content: the draft's creator and every editor who saved it (four eyes).
    contributors = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="reviewed_text_versions"
    )
    review_note = models.TextField(blank=True)
    # The safety scan of the submitted content (knowledge.services.safety), as Finding.as_dict() items.
    findings = models.JSONField(default=list, blank=True, editable=False)

    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True, editable=False)
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    published_at = models.DateTimeField(null=True, blank=True, editable=False)
    lock_version = models.PositiveIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["text", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["text", "number"], name="textversion_unique_number"),
            models.UniqueConstraint(
                fields=["text"],
                condition=models.Q(state=VersionState.PUBLISHED),
                name="textversion_one_published",
            ),
            models.UniqueConstraint(
                fields=["text"], condition=models.Q(state__in=OPEN_STATES), name="textversion_one_open"
            ),
            models.CheckConstraint(condition=models.Q(state__in=VersionState.values), name="textversion_state_known"),
        ]

    def __str__(self) -> str:
        return f"{self.text} v{self.number}"
