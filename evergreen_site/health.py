"""/healthz for load balancers and container health checks: the database and the cache answer."""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse


def healthz(request: HttpRequest) -> JsonResponse:
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
    return JsonResponse({"status": "ok" if healthy else "degraded", **checks}, status=200 if healthy else 503)
