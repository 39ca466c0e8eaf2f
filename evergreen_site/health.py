"""Health for load balancers and monitoring: /healthz (this process serves) and /readyz (every dependency answers).

Both answer within a few seconds whatever fails: the database is probed on a fresh connection with a
2-second connect and statement timeout, Redis through the guarded client (one short timeout, or at
once while its breaker is open). Both return the same JSON; they differ in what earns a 200.

- /healthz: 200 while the process can answer agents — the database answers, or it holds releases in
  memory to serve from (README, "When a dependency fails"). Route traffic and run container health
  checks on it: a worker serving from memory during a database outage should keep its traffic.
- /readyz: 200 only when the database and Redis both answer. Alert on it, and wait for it after a deploy.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

import orjson
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from gateway.errors import METHOD_NOT_ALLOWED, MethodNotAllowedError
from gateway.http import JSON, CachePolicy, Reply, error_reply, finish
from knowledge.resilience.database import database_probe, database_staleness
from knowledge.selectors.serving import releases_in_memory


def _cache_probe() -> str:
    try:
        cache.set("healthz", 1, timeout=5)
    except Exception as error:  # noqa: BLE001  # reported, not raised: this is the health check
        return f"error: {type(error).__name__}"
    return "ok"


def health_report() -> dict[str, Any]:
    database = database_probe()
    report: dict[str, Any] = {"database": database, "cache": _cache_probe()}
    healthy = all(value == "ok" for value in report.values())
    held = releases_in_memory()
    report["serving"] = database == "ok" or held > 0
    report["releases_in_memory"] = held
    staleness = database_staleness()
    if staleness is not None:
        report["database_failing_seconds"] = int(staleness)
    return {"status": "ok" if healthy else "degraded", **report}


# A health answer is about this moment: never cached, but with the headers every answer carries.
NO_STORE = {"Cache-Control": "no-store"}


def _answer(request: HttpRequest, report: dict[str, Any], ok: bool) -> HttpResponse:
    reply = Reply(orjson.dumps(report), JSON, status=200 if ok else 503)
    return finish(request, reply, cache=CachePolicy(), extra=NO_STORE)


def probe(view: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    """GET and HEAD only: any other method is the JSON 405 every read route answers (not a CSRF page)."""

    @csrf_exempt
    @wraps(view)
    def checked(request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            return view(request)
        reply = error_reply(MethodNotAllowedError(METHOD_NOT_ALLOWED))
        reply.headers["Allow"] = "GET, HEAD"
        return finish(request, reply, cache=CachePolicy(), extra=NO_STORE)

    return checked


@probe
def healthz(request: HttpRequest) -> HttpResponse:
    report = health_report()
    return _answer(request, report, report["serving"])


@probe
def readyz(request: HttpRequest) -> HttpResponse:
    report = health_report()
    return _answer(request, report, report["status"] == "ok")
