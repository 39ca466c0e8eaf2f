"""Request IDs on every answer and in every log record; JSON log lines; the optional access log."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from knowledge.models import Namespace
from knowledge.security_events import security_client_hash
from knowledge.telemetry import ids
from knowledge.telemetry.logs import JsonFormatter, RequestIdFilter
from tests.configure import configure
from tests.security.events import security_records

pytestmark = pytest.mark.django_db


def test_every_answer_names_its_request_and_a_proxys_id_is_kept(client: Any, alpha: Namespace) -> None:
    made = client.get("/t/alpha/api/context?topic=alpha")
    kept = client.get("/t/alpha/llms.txt", headers={"X-Request-ID": "nginx-7f3a"})
    refused = client.get("/t/alpha/api/context?topic=alpha", headers={"X-Request-ID": "<script>"})
    assert len(made["X-Request-ID"]) >= 16
    assert kept["X-Request-ID"] == "nginx-7f3a"
    assert refused["X-Request-ID"] != "<script>"
    assert client.get("/admin/login/")["X-Request-ID"]


def test_security_events_carry_the_request_id(client: Any, ns_b: Namespace, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="evergreen.security")
    Namespace.objects.filter(pk=ns_b.pk).update(is_public=False)
    response = client.get("/t/beta/llms.txt", headers={"X-Request-ID": "trace-1"})
    (event,) = security_records(caplog, "access_denied")
    assert response["X-Request-ID"] == "trace-1" == event["request_id"]


def test_a_json_log_line_holds_the_request_id_and_extra_fields() -> None:
    record = logging.LogRecord("evergreen.test", logging.WARNING, __file__, 1, "hello %s", ("world",), None)
    record.route = "api-context"
    token = ids.current.set("abc123")
    try:
        RequestIdFilter().filter(record)
    finally:
        ids.current.reset(token)
    line = json.loads(JsonFormatter().format(record))
    assert line["message"] == "hello world"
    assert (line["request_id"], line["route"], line["level"], line["logger"]) == (
        "abc123",
        "api-context",
        "WARNING",
        "evergreen.test",
    )
    assert line["at"].endswith("+00:00")


def test_the_access_log_writes_one_record_per_answer_without_the_address(
    client: Any, alpha: Namespace, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    configure(settings, access_log=True)
    caplog.set_level("INFO", logger="evergreen.access")
    response = client.get("/t/alpha/api/context?topic=secret%20plans")
    (record,) = [r for r in caplog.records if r.name == "evergreen.access"]
    line = json.loads(JsonFormatter().format(record))
    assert line["request_id"] == response["X-Request-ID"]
    assert (line["route"], line["channel"], line["status"]) == ("api-context", "rest", 200)
    assert line["path"] == "/t/alpha/api/context"  # never the query string
    assert line["client"] == security_client_hash("127.0.0.1")
    assert "127.0.0.1" not in json.dumps(line)
