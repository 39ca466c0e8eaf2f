"""The OpenAPI 3.1 document of a namespace's public surface, built from the route table in api.openapi.paths."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import orjson

from api.openapi.components import components
from api.openapi.paths import paths

OPENAPI_VERSION = "3.1.0"
DESCRIPTION = (
    "Token-budgeted, citable knowledge for AI agents. Every read answer carries Content-Type with "
    "charset=utf-8, an ETag (a hash of the body), Cache-Control (public, max-age=900; private for private "
    "namespaces), X-Content-Type-Options: nosniff and the RateLimit fields; If-None-Match answers 304 and "
    "HEAD answers GET's headers. Every namespace route also exists under /t/{namespace}/ (the second server). "
    "Private namespaces need Authorization: Bearer <key> and otherwise answer 404 like an unknown one. "
    "Errors are {error: {code, message, param}} with the codes listed per operation."
)
TAGS = [
    {"name": "agents", "description": "The read surface of seed §4, §6 and §10."},
    {"name": "pages", "description": "Human pages, each with a Markdown twin."},
    {"name": "protocols", "description": "MCP and A2A (see docs/protocols.md)."},
    {"name": "operations", "description": "Health and metrics for operators (root only)."},
]


def openapi_document(
    *, categories: Sequence[str] | None = None, scenarios: Sequence[str] | None = None
) -> dict[str, Any]:
    """The document; with a namespace's categories and prompt-pack scenarios their parameters are enums."""
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "Evergreen API", "version": "1", "description": DESCRIPTION},
        "servers": [
            {"url": "/", "description": "The namespace of the host name (or the default namespace)."},
            {
                "url": "/t/{namespace}",
                "description": "Any namespace by its slug.",
                "variables": {"namespace": {"default": "evergreen"}},
            },
        ],
        "tags": TAGS,
        "security": [{}, {"apiKey": []}],
        "paths": paths(categories=categories, scenarios=scenarios),
        "components": {
            **components(),
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer", "description": "A namespace API key (private ones)."},
                "metricsToken": {"type": "http", "scheme": "bearer", "description": "EVERGREEN_METRICS_TOKEN."},
            },
        },
    }


@lru_cache(maxsize=64)
def openapi_bytes(categories: tuple[str, ...] | None, scenarios: tuple[str, ...] | None) -> bytes:
    return orjson.dumps(openapi_document(categories=categories, scenarios=scenarios))
