"""gateway.fastpost with mcp_bridge.fastpath: MCP search_context calls answered in front of Django, exactly as
Django answers them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gateway.replay import ReplayApp
from knowledge.models import Namespace
from knowledge.selectors.serving import serving_caches_clear
from tests.configure import configure
from tests.gateway.replaying import CountingDjango, call
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

pytestmark = pytest.mark.django_db

PER_REQUEST = {"X-Request-ID", "RateLimit"}
MCP = "/t/alpha/mcp"
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp_protocol_version": "2025-11-25"}
TOPICS = ("alpha", "pricing", "token budget", "tuesday", "nothing-matches-this")
Answer = tuple[str, dict[str, str], bytes]


def tool_call(number: int, tool: str = "search_context", **arguments: Any) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}).encode()


def mcp(app: Any, body: bytes, **headers: str) -> Answer:
    return call(app, MCP, method="POST", body=body, **{**MCP_HEADERS, **headers})


def comparable(answer: Answer) -> Answer:
    status, headers, body = answer
    return status, {name: value for name, value in headers.items() if name not in PER_REQUEST}, body


def test_a_search_on_a_route_django_answered_is_answered_without_django_and_identically(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    mcp(app, tool_call(1, query="first"))  # Django answers, and the route is learnt
    calls = [tool_call(n, query=topic, budget=900) for n, topic in enumerate(TOPICS, start=2)]
    calls.append(tool_call(9, query="alpha", category="nope"))  # an isError result, a 200 all the same
    fast = [mcp(app, body) for body in calls]
    assert django_app.calls == 1

    through_django = [mcp(django_app, body) for body in calls]
    assert django_app.calls == 1 + len(calls)
    assert [comparable(answer) for answer in fast] == [comparable(answer) for answer in through_django]
    assert all(b'"structuredContent"' in body for _, _, body in fast[:-1])
    assert b'"isError":true' in fast[-1][2]


@pytest.mark.parametrize(
    ("body", "headers"),
    [
        (tool_call(2, "get_entry", id="AL-001"), {}),  # another tool
        (json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode(), {}),
        (b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call"', {}),  # unreadable: a 400
        (tool_call(2, query="alpha"), {"mcp_protocol_version": "2026-07-28"}),  # the modern revision
        (tool_call(2, query="alpha"), {"origin": "http://testserver"}),  # CORS headers of its own
        (tool_call(2, query="alpha"), {"authorization": "Bearer not-a-key"}),
        (tool_call(2, query="alpha"), {"accept": "text/html"}),  # a 406
    ],
)
def test_what_the_fast_route_does_not_answer_goes_to_django_with_its_body(
    served: Namespace, app: ReplayApp, django_app: CountingDjango, body: bytes, headers: dict[str, str]
) -> None:
    mcp(app, tool_call(1, query="first"))
    answered = mcp(app, body, **headers)
    assert django_app.calls == 2
    assert comparable(answered) == comparable(mcp(django_app, body, **headers))


def test_a_new_release_is_answered_from_it(served: Namespace, app: ReplayApp, django_app: CountingDjango) -> None:
    mcp(app, tool_call(1, query="first"))
    publish(served, [*alpha_rows(), {**alpha_rows()[0], "id": "AL-003", "title": "Alpha three"}], now=BUILT_AT)
    serving_caches_clear()  # as the one-second namespace cache would expire
    after = mcp(app, tool_call(2, query="alpha three"))

    assert b"AL-003" in after[2]
    assert comparable(after) == comparable(mcp(django_app, tool_call(2, query="alpha three")))


def test_the_rate_limit_counts_fast_calls_and_django_refuses_past_it(
    alpha: Namespace, app: ReplayApp, django_app: CountingDjango, settings: Any
) -> None:
    configure(settings, rate_limit="3/hour")
    answers = [mcp(app, tool_call(n, query=f"t{n}")) for n in range(4)]

    assert [status for status, _, _ in answers] == ["200 OK"] * 3 + ["429 Too Many Requests"]
    assert [headers["RateLimit"].split(";")[1] for _, headers, _ in answers[:3]] == ["r=2", "r=1", "r=0"]
    assert django_app.calls == 2  # the first call, which taught the route, and the refusal


def test_a_private_namespace_is_never_answered_in_front_of_django(
    served: Namespace, app: ReplayApp, django_app: CountingDjango
) -> None:
    mcp(app, tool_call(1, query="first"))
    Namespace.objects.filter(pk=served.pk).update(is_public=False)
    serving_caches_clear()
    refused = mcp(app, tool_call(2, query="alpha"))
    assert django_app.calls == 2
    assert refused[0].startswith("404")
