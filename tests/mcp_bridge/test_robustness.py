"""Whatever arrives, the core answers with an outcome (never an exception, never a 5xx) and stays HTTP-free."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_bridge.a2a import handle_a2a_post
from mcp_bridge.protocol import McpHeaders, handle_post
from tests.mcp_bridge.fakes import FakeBackend, FakeTaskStore

PACKAGE = Path(__file__).resolve().parents[2] / "mcp_bridge"
FORBIDDEN = ("django", "rest_framework", "starlette", "httpx", "mcp", "a2a", "knowledge", "api", "gateway")
# The Django side of the bridge: the AppConfig, the ports' adapters, the HTTP views and routes.
ADAPTERS = frozenset({"apps.py", "backend.py", "fastpath.py", "task_store.py", "transport.py", "views.py", "urls.py"})

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
METHODS = ("initialize", "ping", "server/discover", "tools/list", "tools/call", "resources/read", "prompts/get")
methods = st.sampled_from([*METHODS, "message/send", "tasks/get", "tasks/cancel", "x"])
envelopes = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": methods},
    optional={"id": st.integers() | st.text(max_size=5) | st.none(), "params": json_values},
)
headers = st.builds(
    McpHeaders,
    st.none() | st.sampled_from(["2026-07-28", "2025-11-25", "2024-11-05", "junk"]),
    st.none() | methods,
    st.none() | st.text(max_size=10),
)


# The one domain module the core may use: the agent contract (pure records, JSON and schemas).
CONTRACT = "knowledge.retrieval.contract"


def _imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        roots.update(name.split(".")[0] for name in names if not name.startswith(CONTRACT))
    return roots


def test_the_core_imports_no_django_http_sdk_or_domain_code() -> None:
    for path in PACKAGE.glob("*.py"):
        if path.name in ADAPTERS:
            continue
        assert not _imported_roots(path) & set(FORBIDDEN), path.name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=200), mcp_headers=headers)
def test_any_bytes_get_an_mcp_outcome(body: bytes, mcp_headers: McpHeaders) -> None:
    assert handle_post(body, mcp_headers, FakeBackend()).status in {200, 202, 400, 404}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=envelopes | json_values, mcp_headers=headers)
def test_any_json_gets_an_mcp_outcome(message: Any, mcp_headers: McpHeaders) -> None:
    outcome = handle_post(json.dumps(message).encode(), mcp_headers, FakeBackend())
    assert outcome.status in {200, 202, 400, 404}
    assert (outcome.body is None) == (outcome.status == 202)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(message=envelopes | json_values)
def test_any_json_gets_an_a2a_answer_in_a_200_or_no_reply_to_a_notification(message: Any) -> None:
    outcome = handle_a2a_post(json.dumps(message).encode(), FakeBackend(), FakeTaskStore())
    if outcome.status == 202:  # JSON-RPC 2.0 §4.1: a notification is never answered
        assert outcome.body is None and isinstance(message, dict) and "id" not in message
        return
    assert outcome.status == 200 and outcome.body is not None
    assert ("result" in outcome.body) != ("error" in outcome.body)
