"""The security log: one JSON line per event, keyed hashes instead of addresses and keys, repeats folded."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.test import Client, RequestFactory, override_settings

from gateway.security import SecurityEventMiddleware
from knowledge.security_events import (
    ACCESS_DENIED,
    LOGIN_FAILED,
    PERMISSION_DENIED,
    _Repeats,
    security_client_hash,
    security_event,
)
from tests.factories import UserFactory
from tests.security.events import raw_log, security_records

ADDRESS = "203.0.113.77"
KEY = "eg_live_thisisnotarealkeybutlookslikeone"


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="evergreen.security")


def _request(**extra: Any) -> HttpRequest:
    return RequestFactory().get("/t/alpha/api/context", REMOTE_ADDR=ADDRESS, **extra)


def test_an_event_is_one_json_record_with_kind_reason_route_and_namespace(caplog: pytest.LogCaptureFixture) -> None:
    security_event(ACCESS_DENIED, request=_request(), namespace="alpha", reason="no_key")

    (record,) = security_records(caplog)
    assert record["event"] == "security"
    assert record["kind"] == ACCESS_DENIED
    assert record["reason"] == "no_key"
    assert record["namespace"] == "alpha"
    assert record["route"] == "/t/alpha/api/context"
    assert record["method"] == "GET"
    assert record["at"].endswith("+00:00")


def test_the_client_and_the_key_are_keyed_hashes_never_in_clear(caplog: pytest.LogCaptureFixture) -> None:
    security_event(ACCESS_DENIED, request=_request(HTTP_AUTHORIZATION=f"Bearer {KEY}"), namespace="alpha")

    (record,) = security_records(caplog)
    assert record["client"] == security_client_hash(ADDRESS)
    assert record["key"] == security_client_hash(KEY)
    assert len(record["client"]) == 16
    assert ADDRESS not in raw_log(caplog)
    assert KEY not in raw_log(caplog)


def test_the_hash_depends_on_the_server_secret() -> None:
    first = security_client_hash(ADDRESS)
    with override_settings(EVERGREEN=replace(settings.EVERGREEN, security_log_key="another secret")):
        assert security_client_hash(ADDRESS) != first
    assert security_client_hash(ADDRESS) == first


def test_an_explicit_client_wins_over_the_connecting_address(caplog: pytest.LogCaptureFixture) -> None:
    security_event(ACCESS_DENIED, request=_request(), client="198.51.100.9")

    (record,) = security_records(caplog)
    assert record["client"] == security_client_hash("198.51.100.9")


def test_hostile_text_is_bounded_and_escaped(caplog: pytest.LogCaptureFixture) -> None:
    security_event(ACCESS_DENIED, namespace="\ud800" + "x" * 5000, reason="no_key", detail="\x00\n")

    (message,) = [r.getMessage() for r in caplog.records if r.name == "evergreen.security"]
    assert "\n" not in message
    record = json.loads(message)
    assert len(record["namespace"]) == 200
    assert record["detail"] == "\x00\n"


def test_extra_fields_cannot_overwrite_the_core_fields(caplog: pytest.LogCaptureFixture) -> None:
    security_event(ACCESS_DENIED, request=_request(), route="/elsewhere")

    (record,) = security_records(caplog)
    assert record["route"] == "/t/alpha/api/context"


def test_repeats_within_the_window_are_counted_into_the_next_record() -> None:
    repeats = _Repeats()
    key = ("rate_limited", "over_limit", "abc", "alpha")

    assert repeats.admit(key, window=60, now=1000.0) == 0
    assert repeats.admit(key, window=60, now=1010.0) is None
    assert repeats.admit(key, window=60, now=1020.0) is None
    assert repeats.admit(("rate_limited", "over_limit", "def", "alpha"), window=60, now=1020.0) == 0
    assert repeats.admit(key, window=60, now=1061.0) == 2
    assert repeats.admit(key, window=0, now=1062.0) == 0


def test_the_middleware_logs_a_403_once(caplog: pytest.LogCaptureFixture) -> None:
    def forbidden(request: HttpRequest) -> HttpResponse:
        return HttpResponseForbidden()

    def already_logged(request: HttpRequest) -> HttpResponse:
        security_event(ACCESS_DENIED, request=request, reason="no_key")
        return HttpResponseForbidden()

    SecurityEventMiddleware(forbidden)(_request())
    SecurityEventMiddleware(already_logged)(_request())

    assert [r["kind"] for r in security_records(caplog)] == [PERMISSION_DENIED, ACCESS_DENIED]
    assert security_records(caplog)[0]["client"] == security_client_hash(ADDRESS)


@pytest.mark.django_db
def test_a_failed_admin_login_is_logged_without_the_username(caplog: pytest.LogCaptureFixture) -> None:
    UserFactory(username="rita", is_staff=True)
    response = Client(REMOTE_ADDR=ADDRESS).post(
        "/admin/login/", {"username": "rita", "password": "hunter2-wrong"}, REMOTE_ADDR=ADDRESS
    )

    assert response.status_code == 200
    (record,) = security_records(caplog, LOGIN_FAILED)
    assert record["reason"] == "bad_credentials"
    assert record["route"] == "/admin/login/"
    assert record["user"] == security_client_hash("rita")
    assert "rita" not in raw_log(caplog)
    assert "hunter2" not in raw_log(caplog)
    assert ADDRESS not in raw_log(caplog)
