"""A failed dependency answers 503 with a stable code, never 500; answers served from memory say so.

- `unavailable_error` names the dependency behind an exception (PostgreSQL, Redis, the task broker);
- `DependencyFailureMiddleware` turns such an exception in any view (the admin's writes included) into
  503 + Retry-After with `{"error": {"code": …}}`, or a short HTML page for the admin;
- `server_error` (handler500) does the same for one raised outside a view (a session saved on the way out);
- `degraded_headers` is the `Evergreen-Degraded` header of answers given while PostgreSQL fails.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

import orjson
import redis
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseServerError
from django.utils.html import escape
from kombu.exceptions import OperationalError as BrokerError

from gateway.errors import UnavailableError
from knowledge.resilience.database import database_staleness

logger = logging.getLogger(__name__)

HEADER = "Evergreen-Degraded"
RETRY_AFTER_SECONDS = 30
UNAVAILABLE = "{what} does not answer, so this request could not be completed. Retry in a minute."
MESSAGES = {
    "database_unavailable": UNAVAILABLE.format(what="The database"),
    "redis_unavailable": UNAVAILABLE.format(what="Redis"),
    "broker_unavailable": UNAVAILABLE.format(what="The task queue"),
}
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Temporarily unavailable</title></head>
<body><h1>Temporarily unavailable</h1><p>{message}</p><p>Error code: <code>{code}</code></p></body></html>
"""


def unavailable_error(error: BaseException) -> UnavailableError | None:
    """The 503 of an exception caused by a dependency, or None for any other exception."""
    if isinstance(error, DatabaseError):
        code = "database_unavailable"
    elif isinstance(error, redis.RedisError):
        code = "redis_unavailable"
    elif isinstance(error, BrokerError):
        code = "broker_unavailable"
    else:
        return None
    refusal = UnavailableError(MESSAGES[code], code=code)
    refusal.headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return refusal


def database_unavailable(error: DatabaseError) -> UnavailableError:
    refusal = unavailable_error(error)
    assert refusal is not None
    logger.warning("Answering 503: %s", error)
    return refusal


def degraded_headers() -> dict[str, str]:
    """`Evergreen-Degraded: database;stale=<s>` while PostgreSQL fails: the answer came from this
    process's memory, last confirmed against the database <s> seconds ago (or earlier)."""
    staleness = database_staleness()
    return {} if staleness is None else {HEADER: f"database;stale={int(staleness)}"}


def unavailable_response(request: HttpRequest, refusal: UnavailableError) -> HttpResponse:
    if request.path.startswith("/admin/"):
        page = PAGE.format(message=escape(refusal.message), code=refusal.code)
        response = HttpResponse(page, status=refusal.status, content_type="text/html; charset=utf-8")
    else:
        response = HttpResponse(
            orjson.dumps(refusal.body()), status=refusal.status, content_type="application/json; charset=utf-8"
        )
    response["Cache-Control"] = "no-store"
    for name, value in refusal.headers.items():
        response[name] = value
    return response


class DependencyFailureMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        refusal = unavailable_error(exception)
        if refusal is None:
            return None
        logger.warning("%s %s: %s (%s)", request.method, request.path, refusal.code, exception)
        return unavailable_response(request, refusal)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: a dependency failure outside a view is still a 503 with its code; anything else a 500."""
    refusal = unavailable_error(sys.exc_info()[1] or Exception())
    if refusal is not None:
        return unavailable_response(request, refusal)
    return HttpResponseServerError("<h1>Server Error (500)</h1>", content_type="text/html")
