"""/healthz for load balancers and container health checks: the database and the cache answer."""

from __future__ import annotations

import orjson
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse

from gateway.http import JSON, CachePolicy, Reply, finish

# A health answer is about this moment: never cached, but with the headers every answer carries.
NO_STORE = {"Cache-Control": "no-store"}


def healthz(request: HttpRequest) -> HttpResponse:
    checks: dict[str, str] = {}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
    except Exception as error:  # noqa: BLE001  # reported, not raised: this is the health check
        checks["database"] = f"error: {type(error).__name__}"
    try:
        cache.set("healthz", 1, timeout=5)
        checks["cache"] = "ok"
    except Exception as error:  # noqa: BLE001
        checks["cache"] = f"error: {type(error).__name__}"
    healthy = all(value == "ok" for value in checks.values())
    body = orjson.dumps({"status": "ok" if healthy else "degraded", **checks})
    reply = Reply(body, JSON, status=200 if healthy else 503)
    return finish(request, reply, cache=CachePolicy(), extra=NO_STORE)
