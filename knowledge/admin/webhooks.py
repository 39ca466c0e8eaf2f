"""Admin for webhook endpoints (namespace admins), their delivery log, and the history of activations."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from knowledge.admin.base import NamespaceScopedAdmin, NamespaceScopedInline, ReadOnlyAdmin, namespace_action
from knowledge.errors import ServiceError
from knowledge.models import ReleaseActivation, Role, WebhookDelivery, WebhookEndpoint
from knowledge.services.webhook_delivery import webhook_retry_now
from knowledge.services.webhooks import (
    webhook_endpoint_change,
    webhook_endpoint_create,
    webhook_endpoint_enable,
    webhook_secret_rotate,
    webhook_test_send,
    webhook_url_problem,
)

URL_HELP = "Receives POST requests with a signed JSON body whenever this namespace's release changes."
NEW_SECRET_ATTRIBUTE = "_evergreen_new_webhook_secret"  # noqa: S105  # a request attribute's name, not a secret
SECRETS_TEMPLATE = "admin/knowledge/webhookendpoint/secrets.html"


def secrets_page(request: HttpRequest, title: str, shown: list[tuple[WebhookEndpoint, str]]) -> TemplateResponse:
    """New signing secrets, in the answer to the POST that made them: never in a message, cookie, session or log."""
    context = {**admin.site.each_context(request), "title": title, "shown": shown}
    response = TemplateResponse(request, SECRETS_TEMPLATE, context)
    response["Cache-Control"] = "no-store"
    return response


def _https_first(field: Any, **kwargs: Any) -> Any:
    """A URL typed without a scheme means https (Django 6's default; 5.2 warns until it is chosen)."""
    if isinstance(field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return field.formfield(**kwargs)


class WebhookEndpointForm(forms.ModelForm):
    class Meta:
        model = WebhookEndpoint
        fields = ["namespace", "url", "description"]
        formfield_callback = _https_first
        help_texts = {"url": URL_HELP}

    def clean_url(self) -> str:
        url = self.cleaned_data["url"]
        problem = webhook_url_problem(url)
        if problem is not None:
            raise forms.ValidationError(problem)
        return url


class DeliveryInline(NamespaceScopedInline, admin.TabularInline):
    model = WebhookDelivery
    fields = readonly_fields = ("created_at", "event", "status", "attempts", "last_status_code", "last_error")
    extra = 0
    max_num = 0
    read_only = True
    ordering = ["-created_at"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(NamespaceScopedAdmin):
    view_role = change_role = Role.ADMIN
    form = WebhookEndpointForm
    list_display = ["url", "namespace", "is_active", "consecutive_failures", "disabled_reason", "created_at"]
    list_filter = ["namespace", "is_active"]
    inlines = [DeliveryInline]
    actions = ["send_test", "rotate_secret", "enable"]

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.inlines if obj is not None else []  # a new endpoint has no deliveries yet

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is None:
            return []
        return ["namespace", "is_active", "consecutive_failures", "disabled_at", "disabled_reason", "created_at"]

    def save_model(self, request: HttpRequest, obj: WebhookEndpoint, form: Any, change: bool) -> None:
        if change:
            webhook_endpoint_change(endpoint=obj, url=obj.url, description=obj.description, actor=request.user)
            return
        endpoint, secret = webhook_endpoint_create(
            namespace=obj.namespace, url=obj.url, description=obj.description, actor=request.user
        )
        obj.pk = endpoint.pk
        setattr(request, NEW_SECRET_ATTRIBUTE, secret)

    def response_add(self, request: HttpRequest, obj: WebhookEndpoint, post_url_continue: str | None = None) -> Any:
        return secrets_page(request, "Webhook endpoint added", [(obj, getattr(request, NEW_SECRET_ATTRIBUTE))])

    @namespace_action(role=Role.ADMIN, description="Send a test notice")
    def send_test(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            webhook_test_send(endpoint=endpoint, actor=request.user)
        self.message_user(request, f"Queued a webhook.test notice to {queryset.count()} endpoint(s).")

    @namespace_action(role=Role.ADMIN, description="Rotate the signing secret")
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> HttpResponse:
        shown = [(endpoint, webhook_secret_rotate(endpoint=endpoint, actor=request.user)) for endpoint in queryset]
        return secrets_page(request, "Signing secrets rotated", shown)

    @namespace_action(role=Role.ADMIN, description="Enable again")
    def enable(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            try:
                webhook_endpoint_enable(endpoint=endpoint, actor=request.user)
            except ServiceError as error:
                messages.error(request, str(error))


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    namespace_path = "endpoint__namespace"
    view_role = Role.ADMIN
    list_display = ["created_at", "event", "endpoint", "status", "attempts", "last_status_code", "delivered_at"]
    list_filter = ["status", "event"]
    list_select_related = ["endpoint"]
    readonly_fields = [
        "endpoint",
        "activation",
        "message_id",
        "event",
        "status",
        "attempts",
        "next_attempt_at",
        "last_attempt_at",
        "delivered_at",
        "last_status_code",
        "last_error",
        "log",
        "payload",
        "created_at",
    ]
    actions = ["retry_now"]

    @namespace_action(role=Role.ADMIN, description="Retry now")
    def retry_now(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        for delivery in queryset.select_related("endpoint__namespace"):
            webhook_retry_now(delivery=delivery, actor=request.user)
        self.message_user(request, f"Queued {queryset.count()} notice(s) again.")


@admin.register(ReleaseActivation)
class ReleaseActivationAdmin(ReadOnlyAdmin):
    list_display = ["at", "namespace", "kind", "release", "previous"]
    list_filter = ["namespace", "kind"]
    list_select_related = ["namespace", "release", "previous"]
    readonly_fields = ["at", "namespace", "kind", "release", "previous"]
