"""Tenants: a namespace with its categories, ID blocks, host names, members and API keys."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

if TYPE_CHECKING:
    from knowledge.models.release import Release

PREFIX_VALIDATOR = RegexValidator(
    r"^[A-Z][A-Z0-9]{0,15}$", "Use 1-16 capital letters or digits, starting with a letter (e.g. EG)."
)


class Ranker(models.TextChoices):
    BM25F = "bm25f", "BM25F (field-weighted, default)"
    SEED = "seed", "Seed formula (id×8, title×5, tags×4, summary×3, body)"


class Packing(models.TextChoices):
    RELEVANT = "relevant", "Relevant hits only (relative and absolute relevance floors, default)"
    SEED = "seed", "Fill the budget in rank order (seed §4)"


class Namespace(models.Model):
    """A tenant: its own IDs, entries, releases, keys and limits."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    prefix = models.CharField(max_length=16, validators=[PREFIX_VALIDATOR])
    id_digits = models.PositiveSmallIntegerField(
        default=3,
        validators=[MinValueValidator(3), MaxValueValidator(9)],
        help_text="Minimum number of digits in a public ID (EG-007 has 3).",
    )

    # The profile: what agents are told about the namespace. Written only by publishing a reviewed
    # version of its profile text (knowledge.services.texts), never by a settings form.
    title = models.CharField(max_length=200, blank=True, editable=False)
    summary = models.CharField(
        max_length=300, blank=True, editable=False, help_text="One line, used as the llms.txt summary."
    )
    contact = models.CharField(max_length=200, blank=True, editable=False)
    license = models.CharField(max_length=64, default="CC-BY-4.0")
    base_url = models.URLField(help_text="Canonical public URL, e.g. https://evergreen.example.com")
    language = models.CharField(max_length=16, default="en", help_text="BCP 47 tag; hints use it.")

    is_public = models.BooleanField(default=True, help_text="Private namespaces need an API key.")
    default_budget = models.PositiveIntegerField(
        default=2000, validators=[MinValueValidator(200), MaxValueValidator(8000)]
    )
    rules = models.JSONField(
        default=list, blank=True, editable=False, help_text="The output rules every response carries (profile)."
    )
    faq = models.JSONField(
        default=list, blank=True, editable=False, help_text="[{question, answer}] for the FAQPage JSON-LD (profile)."
    )
    allow_self_approval = models.BooleanField(
        default=False, help_text="Single-person mode: an author may approve their own version."
    )

    ranker = models.CharField(max_length=16, choices=Ranker.choices, default=Ranker.BM25F)
    match_threshold = models.FloatField(
        null=True,
        blank=True,
        help_text="Match score needed for matched=true; empty = each release calibrates its own.",
    )
    match_threshold_note = models.CharField(
        max_length=300, blank=True, help_text="How the match threshold was obtained (calibrate_threshold writes it)."
    )
    link_expansion = models.BooleanField(
        null=True, blank=True, help_text="Link-graph expansion; empty = the engine's default."
    )
    packing = models.CharField(
        max_length=16,
        choices=Packing.choices,
        default=Packing.RELEVANT,
        help_text="Which hits /api/context packs: only relevant ones, or the budget filled in rank order (seed §4).",
    )
    log_requests = models.BooleanField(
        default=True,
        help_text="Record agents' requests (topic, entries returned; the caller only as a keyed hash) for the "
        "knowledge-gap report and replay.",
    )
    rate_limit = models.CharField(
        max_length=32, blank=True, help_text='e.g. "120/min"; "0" = off; empty = the global setting.'
    )
    knowledge_version = models.CharField(
        max_length=32, default="1.0.0", help_text="Semver the first release starts from."
    )

    active_release: models.ForeignKey[Release | None, Release | None] = models.ForeignKey(
        "knowledge.Release",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        editable=False,
    )
    # Bumped in the same transaction as every change a release is built from.
    content_serial = models.PositiveBigIntegerField(default=0, editable=False)
    # The content serial the active release was activated for: a build that read older content
    # never replaces it (a reused release keeps the serial it was first built from).
    active_serial = models.PositiveBigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug


class NamespaceHost(models.Model):
    """A host name that routes to a namespace; one host belongs to one namespace."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="hosts")
    host = models.CharField(max_length=253, unique=True)

    def __str__(self) -> str:
        return self.host

    def clean(self) -> None:
        self.host = self.host.strip().lower()


class Sensitivity(models.TextChoices):
    """Who may read an entry (issue 12 §4): everyone, or API keys cleared for its level or above."""

    PUBLIC = "public", "Public"
    INTERNAL = "internal", "Internal"
    RESTRICTED = "restricted", "Restricted"


class Category(models.Model):
    """A category of entries (fact, protocol, rule …) and its purpose."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="categories")
    slug = models.SlugField(max_length=32)
    name = models.CharField(max_length=80)
    purpose = models.CharField(max_length=300, blank=True)
    position = models.PositiveSmallIntegerField(default=0)
    review_days = models.PositiveIntegerField(
        default=365,
        help_text="Days after approval until an entry of this category is due for re-review (0: never by default).",
    )

    class Meta:
        ordering = ["namespace", "position", "slug"]
        verbose_name_plural = "categories"
        constraints = [models.UniqueConstraint(fields=["namespace", "slug"], name="category_unique_slug")]

    def __str__(self) -> str:
        return f"{self.namespace.slug}/{self.slug}"


class IdBlock(models.Model):
    """A range of ID numbers a category allocates from; blocks of a namespace never overlap."""

    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="blocks")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    label = models.CharField(max_length=80, blank=True)

    class Meta:
        ordering = ["start"]
        constraints = [
            models.CheckConstraint(condition=models.Q(start__lte=models.F("end")), name="idblock_start_lte_end"),
        ]

    def __str__(self) -> str:
        return f"{self.start}–{self.end}"


class Role(models.TextChoices):
    EDITOR = "editor", "Editor"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Namespace admin"


class Membership(models.Model):
    """A user's role in a namespace; a user may hold several roles."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "namespace", "role"], name="membership_unique_role"),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.namespace} · {self.role}"


def api_key_digest(raw_key: str) -> str:
    """What is stored of a key and compared on every request: its SHA-256.

    The one definition, so that a key the admin makes always validates at the gateway.
    """
    return hashlib.sha256(raw_key.encode()).hexdigest()


class ApiKey(models.Model):
    """A bearer key scoped to one namespace; only its SHA-256 is stored."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=80)
    lookup = models.CharField(max_length=12, unique=True, help_text="The key's visible first characters.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    clearance = models.CharField(
        max_length=16,
        choices=Sensitivity.choices,
        default=Sensitivity.PUBLIC,
        help_text="The most sensitive entries this key may read.",
    )

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.lookup}…)"
