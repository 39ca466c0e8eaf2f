"""A failed dependency answers 503 with a stable code, never 500; errors on JSON routes answer JSON.

- `unavailable_error` names the dependency behind an exception (PostgreSQL, Redis, the task broker);
- `DependencyFailureMiddleware` turns such an exception in any view (the admin's writes included) into
  503 + Retry-After with `{"error": {"code": …}}`, or a short HTML page for the admin;
- `server_error` (handler500) does the same for one raised outside a view (a session saved on the way out);
  any other error is a 500 `server_error` on a JSON route, Django's page elsewhere;
- `page_not_found` (handler404, and the middleware with DEBUG on) and `bad_request` (handler400) answer
  a JSON route's unknown URL and unreadable request (a body over DATA_UPLOAD_MAX_MEMORY_SIZE: 413
  `body_too_large`) in the README's error shape, and leave pages to Django but for a form over that
  size (a 413 page naming the code);
- `degraded_headers` is the `Evergreen-Degraded` header of answers given while PostgreSQL fails.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable

import orjson
import psycopg
import redis
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseServerError
from django.utils.html import escape
from django.views import defaults
from kombu.exceptions import OperationalError as BrokerError

from gateway.errors import NOT_FOUND, BodyTooLargeError, GatewayError, NotFoundError, ServerError, UnavailableError
from knowledge.resilience.database import database_staleness

logger = logging.getLogger(__name__)

HEADER = "Evergreen-Degraded"
RETRY_AFTER_SECONDS = 30
UNAVAILABLE = "{what} does not answer, so this request could not be completed. Retry in a minute."
MESSAGES = {
    "database_unavailable": UNAVAILABLE.format(what="The database"),
    "database_busy": (
        "Another change to the same records ran at the same moment, so this one was rolled back and nothing "
        "was saved. Send it again."
    ),
    "redis_unavailable": UNAVAILABLE.format(what="Redis"),
    "broker_unavailable": UNAVAILABLE.format(what="The task queue"),
}
SERVER_ERROR = "Something went wrong on our side and was logged; retry later, or report it if it persists."
BAD_REQUEST = "The request could not be read (a malformed header, query string or body)."
BODY_TOO_LARGE = "The body is larger than {limit} bytes."
# The JSON routes, at / and under /t/<namespace>/: the REST API (public and management), MCP and A2A.
_JSON_ROUTE = re.compile(r"/(?:t/[^/]+/)?(?:api|mcp|a2a)(?:/|$)")
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>
<body><h1>{title}</h1><p>{message}</p><p>Error code: <code>{code}</code></p></body></html>
"""
FORM_TOO_LARGE = (
    "The form is larger than {limit} bytes, so nothing was saved. Shorten the text or import large content "
    "with manage.py import_entries."
)


def unavailable_error(error: BaseException) -> UnavailableError | None:
    """The 503 of an exception caused by a dependency, or None for any other exception."""
    if isinstance(error, DatabaseError):
        # A deadlock or serialization failure: PostgreSQL answered and rolled the transaction back.
        busy = isinstance(error.__cause__, (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure))
        code = "database_busy" if busy else "database_unavailable"
    elif isinstance(error, redis.RedisError):
        code = "redis_unavailable"
    elif isinstance(error, BrokerError):
        code = "broker_unavailable"
    else:
        return None
    refusal = UnavailableError(MESSAGES[code], code=code)
    refusal.headers = {"Retry-After": "1" if code == "database_busy" else str(RETRY_AFTER_SECONDS)}
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


def _is_page(response: HttpResponse) -> bool:
    return str(response.get("Content-Type", "")).startswith("text/html")


def json_route(request: HttpRequest) -> bool:
    return _JSON_ROUTE.match(request.path_info) is not None


def _uncached(response: HttpResponse, error: GatewayError) -> HttpResponse:
    response["Cache-Control"] = "no-store"
    for name, value in error.headers.items():
        response[name] = value
    return response


def error_response(error: GatewayError) -> HttpResponse:
    """`{"error": {"code", "message", "param"}}` with the error's status, for a request no view answered."""
    body = orjson.dumps(error.body())
    return _uncached(HttpResponse(body, status=error.status, content_type="application/json; charset=utf-8"), error)


def unavailable_response(request: HttpRequest, refusal: UnavailableError) -> HttpResponse:
    if request.path.startswith("/admin/"):
        page = PAGE.format(title="Temporarily unavailable", message=escape(refusal.message), code=refusal.code)
        return _uncached(HttpResponse(page, status=refusal.status, content_type="text/html; charset=utf-8"), refusal)
    return error_response(refusal)


class DependencyFailureMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code == 404 and settings.DEBUG and json_route(request) and _is_page(response):
            # With DEBUG Django answers an unmatched URL with its HTML page, never handler404: JSON
            # routes answer their documented error in development (make run) as in production.
            return page_not_found(request, Http404())
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestDataTooBig):
            # handler400 answers this only with DEBUG off; with it on (make run) Django would show its debug page
            # (a JSON route's error, a page's 413 either way).
            return bad_request(request, exception)
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
    if json_route(request):
        return error_response(ServerError(SERVER_ERROR))
    return HttpResponseServerError("<h1>Server Error (500)</h1>", content_type="text/html")


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: a URL no route matches, or an Http404 no view turned into its own answer."""
    if json_route(request):
        return error_response(NotFoundError(NOT_FOUND))
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: Django's answer to a SuspiciousOperation or BadRequest raised while reading the request."""
    if not json_route(request):
        if isinstance(exception, RequestDataTooBig):
            return _form_too_large()
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        return error_response(BodyTooLargeError(BODY_TOO_LARGE.format(limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)))
    return error_response(GatewayError(BAD_REQUEST))


def _form_too_large() -> HttpResponse:
    """A page's 413: an admin form over DATA_UPLOAD_MAX_MEMORY_SIZE (Django's own answer is a bare 400)."""
    message = FORM_TOO_LARGE.format(limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    page = PAGE.format(title="Too large", message=escape(message), code="body_too_large")
    response = HttpResponse(page, status=413, content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-store"
    return response
