"""Middleware: a request ID on every answer and log record, request counts and latency for /metrics.

Placed first, so everything below it (the security log included) logs with the request's ID. The
replay layer (gateway.replay) does the same for the answers it gives without Django.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from functools import cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from gateway.clients import client_address
from knowledge.security_events import security_client_hash
from knowledge.telemetry import ids
from knowledge.telemetry.metrics import tallies

access_logger = logging.getLogger("evergreen.access")

PAGES = frozenset({"index", "index-html", "entry-page", "entry-page-md", "doc", "doc-md"})
OPS = frozenset({"healthz", "readyz", "metrics", "api-schema", "api-docs"})
AGENT_CHANNELS = {"mcp": "mcp", "a2a": "a2a", "agent-card": "a2a", "a2a-extension": "a2a"}


@cache
def channel_of(route: str) -> str:
    """rest, mcp, a2a, pages, admin or ops: the label Prometheus groups requests by."""
    if route in AGENT_CHANNELS:
        return AGENT_CHANNELS[route]
    if route in PAGES:
        return "pages"
    if route == "admin":
        return "admin"
    if route in OPS or route == "unmatched":
        return "ops"
    return "rest"


def route_of(request: HttpRequest) -> str:
    match = request.resolver_match
    if match is None:
        return "unmatched"
    if match.app_name == "admin":
        return "admin"
    return match.url_name or "unnamed"


def access_log(
    *, request_id: str, method: str, path: str, status: int, route: str, seconds: float, client: str, memory: bool
) -> None:
    """One JSON-ready record per answer (EVERGREEN_ACCESS_LOG=1): no query string, the client as a keyed hash."""
    access_logger.info(
        "%s %s %s",
        method,
        path,
        status,
        extra={
            "request_id": request_id,
            "method": method,
            "path": path[:200],
            "status": status,
            "route": route,
            "channel": channel_of(route),
            "duration_ms": round(seconds * 1000, 3),
            "client": security_client_hash(client),
            "from_memory": memory,
        },
    )


class TelemetryMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        request_id = ids.request_id_accept(request.META.get(ids.ENVIRON_KEY))
        request.META[ids.META_KEY] = request_id  # for django.request's records, logged after this returns
        token = ids.current.set(request_id)
        try:
            response = self.get_response(request)
            response[ids.HEADER] = request_id
            route = route_of(request)
            seconds = time.perf_counter() - started
            tallies.request(route, channel_of(route), response.status_code, seconds)
            if settings.EVERGREEN.access_log:
                access_log(
                    request_id=request_id,
                    method=request.method or "",
                    path=request.path,
                    status=response.status_code,
                    route=route,
                    seconds=seconds,
                    client=client_address(request),
                    memory=False,
                )
            return response
        finally:
            ids.current.reset(token)
