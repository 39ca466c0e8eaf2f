"""Issue 9: whatever a client posts to /mcp (both eras) or /a2a, the answer is never -32603 and never a 5xx.

Requests go through Django's WSGI handler in process (the test client) against a published namespace
on PostgreSQL, so they reach the real tools, the database and the A2A task store. Hypothesis runs with
fixed seeds (the same requests in every run) and each test checks how many requests it sent; in all,
more than 10,000 per run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from evergreen_site.settings.env import Rate
from knowledge.models import Namespace
from tests.security.fuzz_requests import FuzzRequest, a2a_requests, mcp_requests
from tests.servingfixtures import alpha, clean_serving_state, no_rate_limit

__all__ = ["alpha", "clean_serving_state", "no_rate_limit"]

pytestmark = pytest.mark.django_db

# 10,200 requests in all by default (issue 9 asks for at least 10,000 per CI run); fewer for a quick local run.
TOTAL_REQUESTS = int(os.environ.get("EVERGREEN_FUZZ_REQUESTS", "10200"))
MCP_MODERN_REQUESTS = TOTAL_REQUESTS * 35 // 100
MCP_LEGACY_REQUESTS = TOTAL_REQUESTS * 30 // 100
A2A_REQUESTS = TOTAL_REQUESTS - MCP_MODERN_REQUESTS - MCP_LEGACY_REQUESTS
INTERNAL_ERROR = -32603
ERROR_MEMBERS = frozenset({"code", "message", "data"})


CHUNK = 250  # Hypothesis's per-example cost grows with a run's length: many short seeded runs are faster


def fuzz_settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        print_blob=False,
        suppress_health_check=list(HealthCheck),
    )


def check_answer(response: Any) -> None:
    """A JSON-RPC answer in every case: no 5xx, a JSON-RPC error object shape, and never -32603."""
    assert response.status_code < 500, response.content[:300]
    if response.status_code == 202:
        assert response.content == b""
        return
    body = json.loads(response.content.decode("utf-8"))
    assert isinstance(body, dict) and body.get("jsonrpc") == "2.0" and "id" in body, body
    assert body["id"] is None or (isinstance(body["id"], str | int) and not isinstance(body["id"], bool)), body
    assert ("result" in body) != ("error" in body), body
    if "error" in body:
        error = body["error"]
        assert isinstance(error, dict) and set(error) <= ERROR_MEMBERS, error
        assert isinstance(error["code"], int) and isinstance(error["message"], str), error
        assert error["code"] != INTERNAL_ERROR, (error, response.request)
    else:
        assert isinstance(body["result"], dict)
        assert response.status_code == 200


def run_fuzz(client: Client, path: str, requests: st.SearchStrategy[FuzzRequest], examples: int) -> int:
    """Send ``examples`` generated requests in seeded runs of CHUNK (the same requests in every run of the suite)."""
    sent = 0
    last_task: list[str] = []

    def one(request: FuzzRequest) -> None:
        nonlocal sent
        sent += 1
        headers = {"Accept": "application/json, text/event-stream", **dict(request.headers)}
        task_id = last_task[-1] if last_task else None
        response = client.generic("POST", path, request.encoded(task_id), request.content_type, headers=headers)
        check_answer(response)
        task = response.json().get("result", {}) if response.content else {}
        if isinstance(task, dict) and task.get("kind") == "task":
            last_task.append(task["id"])

    for chunk in range(-(-examples // CHUNK)):
        seed(chunk)(fuzz_settings(min(CHUNK, examples - chunk * CHUNK))(given(request=requests)(one)))()
    return sent


@pytest.fixture
def fuzz_target(alpha: Namespace, no_rate_limit: None, settings: Any) -> Callable[..., int]:
    settings.EVERGREEN = replace(settings.EVERGREEN, feedback_rate_limit=Rate(0, 3600))
    client = Client()
    return lambda path, requests, examples: run_fuzz(client, path, requests, examples)


def test_fuzzed_mcp_requests_of_the_2026_era_never_fail_internally(fuzz_target: Callable[..., int]) -> None:
    assert fuzz_target("/t/alpha/mcp", mcp_requests(modern=True), MCP_MODERN_REQUESTS) >= MCP_MODERN_REQUESTS


def test_fuzzed_mcp_requests_of_the_handshake_era_never_fail_internally(fuzz_target: Callable[..., int]) -> None:
    assert fuzz_target("/t/alpha/mcp", mcp_requests(modern=False), MCP_LEGACY_REQUESTS) >= MCP_LEGACY_REQUESTS


def test_fuzzed_a2a_requests_never_fail_internally(fuzz_target: Callable[..., int]) -> None:
    assert fuzz_target("/t/alpha/a2a", a2a_requests(), A2A_REQUESTS) >= A2A_REQUESTS
