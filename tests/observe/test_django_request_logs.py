"""Django's own records of refused requests ("Bad Request: /api/context") carry the request's ID, never its query."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.telemetry.logs import JsonFormatter, RequestIdFilter

pytestmark = pytest.mark.django_db


def logged_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    """The django.request records as the console handler writes them (its filter runs when it emits)."""
    records = [record for record in caplog.records if record.name == "django.request"]
    for record in records:
        RequestIdFilter().filter(record)
    return [json.loads(JsonFormatter().format(record)) for record in records]


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("get", "/t/alpha/api/context?budget=abc&topic=secret%20plans", 400),
        ("get", "/t/alpha/api/entries/ZZ-999?topic=secret%20plans", 404),
        ("delete", "/t/alpha/api/context?topic=secret%20plans", 405),
    ],
)
def test_a_refused_request_is_logged_with_its_id_and_without_its_query_string(
    client: Any, alpha: Namespace, caplog: pytest.LogCaptureFixture, method: str, path: str, status: int
) -> None:
    caplog.set_level(logging.WARNING, logger="django.request")
    response = getattr(client, method)(path, headers={"X-Request-ID": "qa3-trace-004"})
    assert response.status_code == status
    (line,) = logged_lines(caplog)
    assert line["request_id"] == "qa3-trace-004"
    assert line["request"] == f"{method.upper()} {path.split('?', maxsplit=1)[0]}"
    assert "secret" not in json.dumps(line) and "budget=abc" not in json.dumps(line)


def test_a_record_about_a_request_keeps_that_requests_id_in_the_plain_format(client: Any, alpha: Namespace) -> None:
    request = client.get("/t/alpha/api/context?topic=alpha", headers={"X-Request-ID": "plain-7"}).wsgi_request
    record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Bad Request: %s", ("/x",), None)
    record.request = request
    RequestIdFilter().filter(record)
    assert getattr(record, "request_id", None) == "plain-7"
