"""Release activations (the history of which release served when) and the webhooks that announce them."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from knowledge.models.namespace import Namespace
from knowledge.models.release import Release


class ActivationKind(models.TextChoices):
    BUILD = "build", "Built and activated"
    ROLLBACK = "rollback", "Rolled back"


class ReleaseActivation(models.Model):
    """One switch of a namespace's active release; append-only (the change feed resolves times with it)."""

    namespace = models.ForeignKey(Namespace, on_delete=models.PROTECT, related_name="activations")
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="activations")
    previous = models.ForeignKey(Release, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    kind = models.CharField(max_length=16, choices=ActivationKind.choices)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["namespace", "at"], name="activation_namespace_at")]

    def __str__(self) -> str:
        return f"{self.namespace.slug} → #{self.release.sequence} ({self.kind})"


class WebhookEndpoint(models.Model):
    """A URL that receives a signed notice (Standard Webhooks 1.0) whenever the namespace's release changes."""

    namespace = models.ForeignKey(Namespace, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500, help_text="Receives POST requests with a JSON body.")
    description = models.CharField(max_length=200, blank=True)
    secret = models.CharField(max_length=80, editable=False, help_text="whsec_…, shown once when created.")
    is_active = models.BooleanField(default=True)
    consecutive_failures = models.PositiveIntegerField(default=0, editable=False)
    disabled_at = models.DateTimeField(null=True, blank=True, editable=False)
    disabled_reason = models.CharField(max_length=300, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["namespace", "url"]

    def __str__(self) -> str:
        return self.url


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending (will be retried)"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed (gave up)"
    CANCELLED = "cancelled", "Cancelled (endpoint disabled)"


class WebhookDelivery(models.Model):
    """One notice to one endpoint and every attempt to deliver it: the delivery log."""

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    activation = models.ForeignKey(
        ReleaseActivation, null=True, blank=True, on_delete=models.PROTECT, related_name="deliveries"
    )
    message_id = models.CharField(max_length=40, unique=True, help_text="webhook-id: the same on every attempt.")
    event = models.CharField(max_length=40)
    payload = models.TextField(help_text="The exact JSON body that is signed and sent.")
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    last_status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    log = models.JSONField(default=list, blank=True, help_text="[{at, status, error, ms}] per attempt.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="delivery_due")]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint.url} ({self.status})"
