"""/api/manage/schema/ (OpenAPI 3 of the management API) and /api/manage/docs/ (a plain page of its operations)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import URLPattern, URLResolver, include, path
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView

from manage_api import urls as manage

TITLE = "Evergreen management API"
DESCRIPTION = (
    "Entries, versions, review, releases, feedback, keys and the audit trail of one namespace, through the same "
    "services and rules as the admin (roles per namespace, four eyes, transitions, optimistic locking, audit). "
    "Every path also exists under /t/{namespace}/ (the namespace by slug); at the root the namespace is the "
    "host's, else the default one. Authenticate with a personal API token (Authorization: Bearer egp_…, made "
    "in the admin) or the admin's session (unsafe methods then need X-CSRFToken). Every error answers "
    '{"error": {"code", "message", "param"}}. Lists are cursor-paginated ({next, previous, results}; limit '
    "up to 200) and take `ordering` where listed."
)
SETTINGS = {"TITLE": TITLE, "DESCRIPTION": DESCRIPTION, "VERSION": "1"}

urlpatterns: list[URLPattern | URLResolver] = [path("api/manage/", include((manage.urlpatterns, "manage")))]
URLCONF = "manage_api.openapi"

manage_schema_view = SpectacularAPIView.as_view(urlconf=URLCONF, custom_settings=SETTINGS)


def manage_schema() -> dict[str, Any]:
    generator = SchemaGenerator(urlconf=URLCONF, title=TITLE, description=DESCRIPTION, version="1")
    return generator.get_schema(request=None, public=True)


def manage_docs(request: HttpRequest) -> HttpResponse:
    schema = manage_schema()
    operations = [
        {"path": route, "method": method.upper(), **operation}
        for route, methods in schema["paths"].items()
        for method, operation in methods.items()
    ]
    response = render(request, "evergreen/api_docs.html", {"schema": schema, "operations": operations})
    response["X-Content-Type-Options"] = "nosniff"
    return response
