"""The replay layer's test harness: Django's WSGI handler behind a ReplayApp of the test's own, and one call."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections

from gateway.fastmiss import ContextShapes
from gateway.fastpost import POST_PER_ANSWER
from gateway.replay import ReplayApp, ReplayMemory
from knowledge.models import Namespace


class CountingDjango:
    """Django's WSGI handler, counting the requests that reach it."""

    def __init__(self) -> None:
        self.handler = WSGIHandler()
        self.calls = 0

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        self.calls += 1
        return self.handler(environ, start_response)


@pytest.fixture
def django_app() -> Iterator[CountingDjango]:
    """As Django's test client does: requests must not close the test transaction's connection."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield CountingDjango()
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def app(django_app: CountingDjango) -> ReplayApp:
    return ReplayApp(
        django_app,
        remembered=ReplayMemory(),
        learnt=ContextShapes(),
        learnt_posts=ContextShapes(required=POST_PER_ANSWER),
    )


def call(
    app: Any, path: str, *, method: str = "GET", body: bytes | None = None, **headers: str
) -> tuple[str, dict[str, str], bytes]:
    """One request through `app` (a ReplayApp, or Django's handler itself): (status line, headers, body).
    With `body`, a JSON POST."""
    route, _, query = path.partition("?")
    posted = {} if body is None else {"CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body))}
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": route,
        "QUERY_STRING": query,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "HTTP_HOST": "testserver",
        "REMOTE_ADDR": "203.0.113.9",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body or b""),
        "wsgi.errors": io.StringIO(),
        **{f"HTTP_{name.upper()}": value for name, value in headers.items()},
        **posted,
    }
    sent: list[Any] = []
    body = b"".join(app(environ, lambda status, headers, *_: sent.append((status, headers))))
    status, header_list = sent[0]
    return status, dict(header_list), body


@pytest.fixture
def served(alpha: Namespace, no_rate_limit: None) -> Namespace:
    return alpha
