"""/api/schema/ (OpenAPI 3.1 as JSON) and /api/docs/ (a plain page of the operations, no outside assets).

Both describe the namespace the request addresses (its host, or the default namespace), so the
category and scenario parameters are that namespace's enums; they carry seed §10's headers.
"""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from api.openapi.document import openapi_bytes
from gateway.errors import METHOD_NOT_ALLOWED, GatewayError, MethodNotAllowedError, NamespaceNotFoundError
from gateway.gate import request_gate
from gateway.http import HTML, JSON, CachePolicy, Reply, finish
from gateway.views import ALLOWED_METHODS, gateway_error_response


def _schema(request: HttpRequest) -> tuple[bytes, CachePolicy]:
    """The document for the request's namespace, or without enums when none is readable here."""
    try:
        gate = request_gate(request)
    except NamespaceNotFoundError:
        return openapi_bytes(None, None), CachePolicy()
    snapshot = gate.release.snapshot
    categories = tuple(c.slug for c in snapshot.namespace.categories)
    scenarios = tuple(sorted(name for name, _ in snapshot.prompt_packs)) or None
    return openapi_bytes(categories, scenarios), gate.cache


def _answer(request: HttpRequest, render: Any) -> HttpResponse:
    if request.method not in ALLOWED_METHODS:
        error = MethodNotAllowedError(METHOD_NOT_ALLOWED)
        error.headers = {"Allow": ", ".join(ALLOWED_METHODS)}
        return gateway_error_response(request, error)
    try:
        document, cache = _schema(request)
    except GatewayError as error:
        return gateway_error_response(request, error)
    return finish(request, render(request, document), cache=cache)


def _schema_reply(request: HttpRequest, document: bytes) -> Reply:
    return Reply(document, JSON)


def _docs_reply(request: HttpRequest, document: bytes) -> Reply:
    schema = orjson.loads(document)
    shared = schema["components"]["parameters"]
    operations = [
        {
            "path": route,
            "method": method.upper(),
            **operation,
            "parameters": [
                shared[p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p for p in operation.get("parameters", [])
            ],
        }
        for route, item in schema["paths"].items()
        for method, operation in item.items()
        if method in ("get", "post")
    ]
    html = render_to_string("evergreen/api_docs.html", {"schema": schema, "operations": operations}, request=request)
    return Reply(html.encode(), HTML)


def schema_view(request: HttpRequest) -> HttpResponse:
    return _answer(request, _schema_reply)


def api_docs(request: HttpRequest) -> HttpResponse:
    return _answer(request, _docs_reply)
