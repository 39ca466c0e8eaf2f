"""A dependency failure is a 503 with a stable code wherever it is raised; any other error stays a 500."""

from __future__ import annotations

import orjson
import pytest
import redis
from django.db import OperationalError, connection, transaction
from django.http import HttpResponse
from django.test import RequestFactory
from kombu.exceptions import OperationalError as BrokerError

from gateway.outages import DependencyFailureMiddleware, server_error

CASES = [
    (OperationalError("connection refused"), "database_unavailable"),
    (redis.TimeoutError("Timeout reading from socket"), "redis_unavailable"),
    (BrokerError("Error 111 connecting"), "broker_unavailable"),
]


def middleware() -> DependencyFailureMiddleware:
    return DependencyFailureMiddleware(lambda request: HttpResponse())


@pytest.mark.parametrize(("error", "code"), CASES)
def test_an_api_request_gets_json_with_the_code_and_retry_after(error: Exception, code: str) -> None:
    response = middleware().process_exception(RequestFactory().post("/t/alpha/api/feedback"), error)

    assert response is not None and response.status_code == 503
    assert orjson.loads(response.content)["error"]["code"] == code
    assert response["Retry-After"] == "30" and response["Cache-Control"] == "no-store"


def test_an_admin_request_gets_a_page_naming_the_code() -> None:
    response = middleware().process_exception(RequestFactory().post("/admin/knowledge/entry/add/"), CASES[0][0])

    assert response is not None and response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    assert b"database_unavailable" in response.content


def test_other_errors_are_left_to_django() -> None:
    assert middleware().process_exception(RequestFactory().get("/llms.txt"), ValueError("a bug")) is None


def test_the_500_handler_answers_503_for_a_dependency_failure_raised_outside_a_view() -> None:
    request = RequestFactory().get("/admin/")
    try:
        raise OperationalError("the session could not be saved")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503 and b"database_unavailable" in response.content

    try:
        raise KeyError("a bug")
    except KeyError:
        assert server_error(request).status_code == 500


@pytest.mark.services
@pytest.mark.django_db
def test_a_deadlock_is_a_busy_database_not_an_outage() -> None:
    """QA: two lists of bases published at once deadlocked, and the one PostgreSQL rolled back was told
    the database did not answer. PostgreSQL's own error (SQLSTATE 40P01) as Django raises it:"""
    with pytest.raises(OperationalError) as caught, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$")

    response = middleware().process_exception(RequestFactory().post("/t/alpha/api/manage/"), caught.value)

    assert response is not None and response.status_code == 503
    error = orjson.loads(response.content)["error"]
    assert error["code"] == "database_busy" and "nothing was saved" in error["message"]
    assert response["Retry-After"] == "1"
