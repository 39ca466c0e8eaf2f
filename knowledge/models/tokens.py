"""Personal API tokens: a person's credential for the management API, scoped to namespaces and a role."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from knowledge.models.namespace import Namespace


class TokenScope(models.TextChoices):
    """The most a token may do; it never grants more than its owner holds in a namespace."""

    READ = "read", "Read only"
    EDITOR = "editor", "Editor"
    REVIEWER = "reviewer", "Reviewer"
    ADMIN = "admin", "Namespace admin"


class PersonalToken(models.Model):
    """A bearer token acting as its owner in the namespaces it names, up to its scope.

    Only the token's SHA-256 (knowledge.models.namespace.api_key_digest) is stored; the secret is shown
    once, to its owner, when it is created.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="personal_tokens")
    name = models.CharField(max_length=80)
    namespaces = models.ManyToManyField(Namespace, related_name="personal_tokens")
    scope = models.CharField(max_length=16, choices=TokenScope.choices, default=TokenScope.READ)
    lookup = models.CharField(max_length=16, unique=True, help_text="The token's visible first characters.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: never expires.")
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "personal API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.lookup}…)"
