"""Issue 9: every refusal at the edges writes a security event with keyed hashes, never an address or a key."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from django.test import Client

from evergreen_site.settings.env import Rate
from knowledge.models import Namespace
from knowledge.security_events import (
    ACCESS_DENIED,
    BAD_KEY,
    BODY_TOO_LARGE,
    ORIGIN_REFUSED,
    PERMISSION_DENIED,
    RATE_LIMITED,
    security_client_hash,
)
from knowledge.services.api_keys import api_key_create, api_key_revoke
from tests.factories import UserFactory
from tests.mcp_bridge.conftest import legacy_request
from tests.security.events import raw_log, security_records
from tests.servingfixtures import alpha, beta, clean_serving_state, no_rate_limit

__all__ = ["alpha", "beta", "clean_serving_state", "no_rate_limit"]

pytestmark = pytest.mark.django_db

ADDRESS = "203.0.113.50"


@pytest.fixture(autouse=True)
def _capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("WARNING", logger="evergreen.security")


@pytest.fixture
def private_alpha(alpha: Namespace) -> Namespace:
    alpha.is_public = False
    alpha.save(update_fields=["is_public"])
    return alpha


@pytest.fixture
def agent() -> Client:
    return Client(REMOTE_ADDR=ADDRESS)


def only(caplog: pytest.LogCaptureFixture, kind: str) -> dict[str, Any]:
    records = security_records(caplog, kind)
    assert len(records) == 1, security_records(caplog)
    assert ADDRESS not in raw_log(caplog)
    assert records[0]["client"] == security_client_hash(ADDRESS)
    return records[0]


def mcp(agent: Client, path: str, **headers: str) -> Any:
    body = json.dumps(legacy_request("ping"))
    return agent.post(path, body, content_type="application/json", headers={"Accept": "application/json", **headers})


@pytest.mark.parametrize("path", ["/t/alpha/api/context", "/t/alpha/llms.txt"])
def test_a_private_namespace_without_a_key_is_logged_as_denied(
    agent: Client, private_alpha: Namespace, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    assert agent.get(path).status_code == 404

    event = only(caplog, ACCESS_DENIED)
    assert event["reason"] == "no_key"
    assert event["namespace"] == "alpha"
    assert event["route"] == path
    assert event["key"] is None


def test_mcp_without_a_key_on_a_private_namespace_is_logged(
    agent: Client, private_alpha: Namespace, caplog: pytest.LogCaptureFixture
) -> None:
    assert mcp(agent, "/t/alpha/mcp").status_code == 404

    assert only(caplog, ACCESS_DENIED)["route"] == "/t/alpha/mcp"


def test_bad_keys_are_logged_with_the_reason_and_the_keys_hash(
    agent: Client, private_alpha: Namespace, beta: Namespace, caplog: pytest.LogCaptureFixture
) -> None:
    _, beta_key = api_key_create(namespace=beta, name="beta agent", actor=None, check_permission=False)
    revoked, revoked_key = api_key_create(namespace=private_alpha, name="old agent", actor=None, check_permission=False)
    api_key_revoke(key=revoked, actor=None, check_permission=False)
    keys = {"egk_made-up": "unknown_key", beta_key: "other_namespace_key", revoked_key: "revoked_key"}

    for key in keys:
        response = agent.get("/t/alpha/api/context", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 404

    events = security_records(caplog, BAD_KEY)
    assert [(event["reason"], event["key"]) for event in events] == [
        (reason, security_client_hash(key)) for key, reason in keys.items()
    ]
    assert all(event["namespace"] == "alpha" for event in events)
    for key in keys:
        assert key not in raw_log(caplog)
    assert ADDRESS not in raw_log(caplog)


def test_a_valid_key_writes_no_event(agent: Client, private_alpha: Namespace, caplog: pytest.LogCaptureFixture) -> None:
    _, key = api_key_create(namespace=private_alpha, name="agent", actor=None, check_permission=False)

    assert agent.get("/t/alpha/api/context", headers={"Authorization": f"Bearer {key}"}).status_code == 200
    assert security_records(caplog) == []


def test_a_429_of_the_read_limiter_is_logged(agent: Client, alpha: Namespace, caplog: pytest.LogCaptureFixture) -> None:
    alpha.rate_limit = "1/hour"
    alpha.save(update_fields=["rate_limit"])
    agent.get("/t/alpha/api/context")

    assert agent.get("/t/alpha/api/context").status_code == 429
    event = only(caplog, RATE_LIMITED)
    assert event["reason"] == "over_limit" and event["limit"] == 1 and event["namespace"] == "alpha"


def test_a_refused_feedback_submission_is_logged(
    agent: Client, alpha: Namespace, no_rate_limit: None, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.EVERGREEN = replace(settings.EVERGREEN, feedback_rate_limit=Rate(1, 3600))
    call = legacy_request("tools/call", {"name": "submit_feedback", "arguments": {"kind": "other", "message": "x"}})
    answers = [
        agent.post("/t/alpha/mcp", json.dumps(call), content_type="application/json", headers={"Accept": "*/*"})
        for _ in range(2)
    ]

    assert [answer.json()["result"]["isError"] for answer in answers] == [False, True]
    event = only(caplog, RATE_LIMITED)
    assert event["reason"] == "feedback_over_limit" and event["route"] == "/t/alpha/mcp"


@pytest.mark.parametrize("path", ["/t/alpha/mcp", "/t/alpha/a2a"])
def test_an_untrusted_origin_is_logged(
    agent: Client, alpha: Namespace, no_rate_limit: None, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    assert mcp(agent, path, Origin="https://evil.example").status_code == 403
    preflight = agent.options(path, headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 403

    events = security_records(caplog, ORIGIN_REFUSED)
    assert [event["origin"] for event in events] == ["https://evil.example"] * 2
    assert {event["reason"] for event in events} == {"untrusted_origin"}
    assert security_records(caplog, PERMISSION_DENIED) == []  # not logged a second time by the middleware


def test_an_oversize_body_is_logged(
    agent: Client, alpha: Namespace, no_rate_limit: None, caplog: pytest.LogCaptureFixture
) -> None:
    huge = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x" * 70_000}})

    response = agent.post("/t/alpha/mcp", huge, content_type="application/json", headers={"Accept": "*/*"})

    assert response.status_code == 413
    assert only(caplog, BODY_TOO_LARGE)["limit"] == 64 * 1024


def test_an_admin_permission_refusal_is_logged_with_the_user(agent: Client, caplog: pytest.LogCaptureFixture) -> None:
    staff: Any = UserFactory(username="stan", is_staff=True)
    agent.force_login(staff)

    assert agent.get("/admin/auth/user/").status_code == 403
    event = only(caplog, PERMISSION_DENIED)
    assert event["user_id"] == staff.pk and event["route"] == "/admin/auth/user/"
