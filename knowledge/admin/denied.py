"""403 inside the admin: the page says which role in which namespace was missing, and the log records it."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views import defaults

from knowledge.actors import actor_id
from knowledge.admin.roles import DENIAL_ATTRIBUTE, refusal
from knowledge.models import Namespace
from knowledge.security_events import PERMISSION_DENIED, security_event

GENERIC_REFUSAL = "Your roles do not allow this page or action."


def admin_refusal_logged(
    request: HttpRequest, *, reason: str, namespace: str | None = None, role: str | None = None, **fields: Any
) -> None:
    """One security event for a refusal in the admin: who, where, which role was missing."""
    security_event(
        PERMISSION_DENIED,
        request=request,
        namespace=namespace,
        reason=reason,
        role=role,
        user_id=actor_id(getattr(request, "user", None)),
        **fields,
    )


def permission_denied(request: HttpRequest, exception: Any = None) -> HttpResponse:
    """handler403: staff in the admin get the admin's own page with the reason; everyone else Django's."""
    user = getattr(request, "user", None)
    if not request.path.startswith(reverse("admin:index")) or not (user and user.is_active and user.is_staff):
        return defaults.permission_denied(request, exception)
    denied = getattr(request, DENIAL_ATTRIBUTE, None)
    slug = Namespace.objects.filter(pk=denied[0]).values_list("slug", flat=True).first() if denied else None
    message = str(exception) if exception is not None else ""
    if not message:
        message = refusal(denied[0], denied[1]) if denied else GENERIC_REFUSAL
    admin_refusal_logged(
        request, reason="missing_role" if denied else "forbidden", namespace=slug, role=denied and denied[1]
    )
    context = {**admin.site.each_context(request), "title": "Not allowed", "reason": message}
    return TemplateResponse(request, "admin/evergreen/denied.html", context, status=403).render()
