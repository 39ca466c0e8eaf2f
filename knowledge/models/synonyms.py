"""Synonym sets: editor-kept phrases that stand for each other at query time, reviewed like entries.

A set (`MCP` ⇄ `Model Context Protocol`, `token budget` ⇄ `Token 预算`) changes through versions that
move along the same table of transitions as entry versions (knowledge.workflow): a draft is
submitted, approved by someone else, and published; only then does the next release expand topics
with it. A published version that is switched off takes the set out of releases, again by review.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from knowledge.models.base import UndeletableModel
from knowledge.models.entry import OPEN_STATES, VersionState
from knowledge.models.namespace import Namespace


class SynonymSet(UndeletableModel):
    """One named set of a namespace; `live_version` is what releases use (None until published)."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="synonym_sets")
    name = models.CharField(max_length=80, help_text="A short name editors know the set by, e.g. “token budget”.")
    live_version = models.ForeignKey(
        "knowledge.SynonymVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="+", editable=False
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["namespace", "name"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"], name="synonymset_unique_name")]

    def __str__(self) -> str:
        return self.name


class SynonymVersion(UndeletableModel):
    """One version of a set's phrases, moving through review (see knowledge.workflow)."""

    synonym_set = models.ForeignKey(SynonymSet, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(editable=False)
    state = models.CharField(max_length=16, choices=VersionState.choices, default=VersionState.DRAFT, editable=False)
    phrases = models.JSONField(
        default=list, help_text="Two or more phrases, any language; matched after the same analysis as entries."
    )
    two_way = models.BooleanField(
        default=True, help_text="Every phrase searches for every other; off: only the first searches for the rest."
    )
    enabled = models.BooleanField(default=True, help_text="Off: once published, releases no longer use the set.")

    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    review_note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)
    submitted_at = models.DateTimeField(null=True, blank=True, editable=False)
    reviewed_at = models.DateTimeField(null=True, blank=True, editable=False)
    published_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["synonym_set", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["synonym_set", "number"], name="synonymversion_unique_number"),
            models.UniqueConstraint(
                fields=["synonym_set"],
                condition=models.Q(state=VersionState.PUBLISHED),
                name="synonymversion_one_published",
            ),
            models.UniqueConstraint(
                fields=["synonym_set"],
                condition=models.Q(state__in=OPEN_STATES),
                name="synonymversion_one_open",
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=VersionState.values), name="synonymversion_state_known"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.synonym_set.name} v{self.number}"
