"""403 inside the admin: the page says which role in which namespace was missing."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.views import defaults

from knowledge.admin.roles import DENIAL_ATTRIBUTE, refusal

GENERIC_REFUSAL = "Your roles do not allow this page or action."


def denial_reason(request: HttpRequest, exception: Any) -> str:
    """The exception's own message, else the last "no" a permission check gave on this request."""
    message = str(exception) if exception is not None else ""
    if message:
        return message
    denied = getattr(request, DENIAL_ATTRIBUTE, None)
    return refusal(*denied) if denied else GENERIC_REFUSAL


def permission_denied(request: HttpRequest, exception: Any = None) -> HttpResponse:
    """handler403: staff in the admin get the admin's own page with the reason; everyone else Django's."""
    user = getattr(request, "user", None)
    if not request.path.startswith(reverse("admin:index")) or not (user and user.is_active and user.is_staff):
        return defaults.permission_denied(request, exception)
    context = {
        **admin.site.each_context(request),
        "title": "Not allowed",
        "reason": denial_reason(request, exception),
    }
    return TemplateResponse(request, "admin/evergreen/denied.html", context, status=403).render()
