"""/api/schema/ (OpenAPI 3 as JSON or YAML) and /api/docs/ (a plain page of the operations, no CDN assets)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.views import SpectacularAPIView

OPENAPI_URLCONF = "api.openapi.operations"

schema_view = SpectacularAPIView.as_view(urlconf=OPENAPI_URLCONF)


def api_schema() -> dict[str, Any]:
    generator = SchemaGenerator(urlconf=OPENAPI_URLCONF)
    return generator.get_schema(request=None, public=True)


def api_docs(request: HttpRequest) -> HttpResponse:
    schema = api_schema()
    operations = [
        {"path": route, "method": method.upper(), **operation}
        for route, methods in schema["paths"].items()
        for method, operation in methods.items()
    ]
    response = render(request, "evergreen/api_docs.html", {"schema": schema, "operations": operations})
    response["X-Content-Type-Options"] = "nosniff"
    return response
