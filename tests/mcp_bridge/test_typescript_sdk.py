"""The official TypeScript MCP SDKs against a live Evergreen server: every tool, resource and prompt, both eras.

Most MCP hosts are built on the TypeScript SDK, and it validates harder than the Python one (zod
schemas for every result, AJV for every ``structuredContent``): a bare date in
``Annotations.lastModified`` once made it reject the whole ``resources/list``. ``typescript/exercise.mjs``
drives one endpoint with ``@modelcontextprotocol/sdk`` 1.x (the 2025 handshake) or
``@modelcontextprotocol/client`` 2.x (the handshake, or ``server/discover`` and 2026-07-28) and
prints what it received; the assertions live here. ``make test`` and ``.ci/run`` install the pinned
packages with ``npm ci`` from ``typescript/package-lock.json``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mcp_bridge.live import LiveServer
from tests.mcp_bridge.live_setup import REPLACEMENT_ID, RETIRED_ID, VAULT_ENTRIES
from tests.services import missing

CLIENTS = Path(__file__).resolve().parent / "typescript"
SCRIPT = CLIENTS / "exercise.mjs"
TOOLS = [
    "search_context",
    "get_entry",
    "get_prompt_pack",
    "get_metrics",
    "submit_feedback",
    "verify_citations",
    "explain_context",
]
PROMPTS = ["chat", "coding", "research", "support"]
# (package, negotiation mode) -> the revision it must end up speaking with Evergreen.
SESSIONS = {
    ("sdk1", "legacy"): "2025-11-25",
    ("client2", "legacy"): "2025-11-25",
    ("client2", "auto"): "2026-07-28",
}
MAJOR = {"sdk1": "1.", "client2": "2."}
RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


def _node_missing() -> str | None:
    if shutil.which("node") is None:
        return "needs Node.js (apt-get install nodejs npm; .ci/run installs it)"
    if not (CLIENTS / "node_modules" / "@modelcontextprotocol" / "client").is_dir():
        return f"needs the npm packages: cd {CLIENTS} && npm ci (make test runs it)"
    return None


def exercise(live: LiveServer, sdk: str, mode: str, *, namespace: str = "evergreen", key: str | None = None) -> Any:
    reason = _node_missing()
    if reason is not None:
        missing(reason)
    command = ["node", str(SCRIPT), sdk, mode, f"{live.url}/t/{namespace}/mcp", *([key] if key else [])]
    return subprocess.run(command, cwd=CLIENTS, capture_output=True, text=True, timeout=180, check=False)


_reports: dict[tuple[str, str, str], dict[str, Any]] = {}


def report(live: LiveServer, sdk: str, mode: str, *, namespace: str = "evergreen", key: str | None = None) -> Any:
    """One run per session and combination (each run also submits one piece of feedback)."""
    if (sdk, mode, namespace) not in _reports:
        done = exercise(live, sdk, mode, namespace=namespace, key=key)
        assert done.returncode == 0, f"{sdk} ({mode}) failed against Evergreen:\n{done.stderr[-4000:]}"
        _reports[sdk, mode, namespace] = json.loads(done.stdout)
    return _reports[sdk, mode, namespace]


def structured(result: dict[str, Any]) -> dict[str, Any]:
    assert "error" not in result, result
    assert result.get("isError") is False, result
    data: dict[str, Any] = result["structuredContent"]
    return data


def error_details(result: dict[str, Any]) -> dict[str, Any]:
    assert result.get("isError") is True, result
    details: dict[str, Any] = json.loads(result["content"][1]["text"])
    return details


session_ids = [f"{sdk}-{mode}" for sdk, mode in SESSIONS]


@pytest.mark.parametrize(("sdk", "mode"), list(SESSIONS), ids=session_ids)
def test_the_sdk_negotiates_its_era_and_lists_the_tools(live: LiveServer, sdk: str, mode: str) -> None:
    seen = report(live, sdk, mode)

    assert seen["version"].startswith(MAJOR[sdk])
    assert seen["protocolVersion"] == SESSIONS[sdk, mode]
    assert seen["server"]["name"] == "evergreen-evergreen"
    assert "search_context" in seen["instructions"]
    assert [tool["name"] for tool in seen["tools"]] == TOOLS
    assert all(tool["outputSchema"]["type"] == "object" for tool in seen["tools"])


@pytest.mark.parametrize(("sdk", "mode"), list(SESSIONS), ids=session_ids)
def test_every_tool_answers_in_a_form_the_sdk_accepts(live: LiveServer, sdk: str, mode: str) -> None:
    calls = report(live, sdk, mode)["calls"]

    pack = structured(calls["search_context"])
    rest = httpx.get(f"{live.url}/t/evergreen/api/context", params={"topic": "token 预算"}).json()
    assert pack == rest and pack["matched"] is True and pack["entries"][0]["id"] == "EG-202"
    capped = structured(calls["search_context_capped"])
    assert capped["budget"] == 8000 and capped["entryCount"] <= 2
    assert "$.budget" in calls["search_context_invalid"]["content"][0]["text"]
    assert error_details(calls["search_context_invalid"])["param"] == "$.budget"

    assert structured(calls["get_entry"])["id"] == "EG-202"
    gone = error_details(calls["get_entry_gone"])
    assert gone["error"] == "gone" and gone["tombstone"]["replacedBy"] == REPLACEMENT_ID
    assert error_details(calls["get_entry_missing"])["nearest"] == ["EG-501", "EG-403", "EG-402"]
    several = structured(calls["get_entry_several"])
    assert [entry["id"] for entry in several["entries"]] == ["EG-202"]
    assert [stone["id"] for stone in several["gone"]] == [RETIRED_ID]
    assert several["missing"] == [{"id": "EG-999", "nearest": ["EG-501", "EG-403", "EG-402"]}]

    assert structured(calls["get_prompt_pack"])["scenario"] == "coding"
    assert "budgetScan" in structured(calls["get_metrics"])
    assert structured(calls["submit_feedback"])["status"] == "queued_for_review"
    checked = structured(calls["verify_citations"])
    assert [(c["id"], c["valid"]) for c in checked["citations"]] == [("EG-202", True), (RETIRED_ID, False)]
    why = {e["id"]: e["outcome"] for e in structured(calls["explain_context"])["explain"]["entries"]}
    assert why[RETIRED_ID] == "retired" and why["EG-202"] in ("in_pack", "over_budget")


@pytest.mark.parametrize(("sdk", "mode"), list(SESSIONS), ids=session_ids)
def test_every_resource_lists_with_rfc3339_dates_and_reads(live: LiveServer, sdk: str, mode: str) -> None:
    seen = report(live, sdk, mode)
    resources = [resource for page in seen["resourcePages"] for resource in page["resources"]]

    assert len(resources) == 14 and f"evergreen://evergreen/{RETIRED_ID}" not in [r["uri"] for r in resources]
    for resource in resources:
        modified = resource["annotations"]["lastModified"]
        assert RFC3339.match(modified), modified
        assert datetime.fromisoformat(modified).tzinfo is not None
    assert set(seen["reads"]) == {resource["uri"] for resource in resources}
    for uri, read in seen["reads"].items():
        assert "error" not in read, (uri, read)
        assert read["contents"][0]["text"].startswith(f"# {uri.rsplit('/', 1)[1]}")
    templates = seen["resourceTemplates"]["resourceTemplates"]
    assert [template["uriTemplate"] for template in templates] == ["evergreen://evergreen/{id}"]
    # -32002 before 2026-07-28; the 2.x client reports any "not found" as -32602 (ResourceNotFoundError).
    assert seen["readGone"]["error"]["code"] in {-32002, -32602}
    assert "retired" in seen["readGone"]["error"]["message"]


@pytest.mark.parametrize(("sdk", "mode"), list(SESSIONS), ids=session_ids)
def test_every_prompt_lists_and_gets(live: LiveServer, sdk: str, mode: str) -> None:
    seen = report(live, sdk, mode)

    assert [prompt["name"] for prompt in seen["prompts"]] == PROMPTS
    for name, got in seen["promptGets"].items():
        assert "error" not in got, (name, got)
        assert name in got["messages"][0]["content"]["text"]
    assert seen["promptUnknown"]["error"]["code"] == -32602


@pytest.mark.parametrize(("sdk", "mode"), [("sdk1", "legacy"), ("client2", "auto")])
def test_a_private_namespace_pages_its_resources_with_a_key(live: LiveServer, sdk: str, mode: str) -> None:
    seen = report(live, sdk, mode, namespace="vault", key=live.vault_key)

    uris = [resource["uri"] for page in seen["resourcePages"] for resource in page["resources"]]
    assert uris == [f"evergreen://vault/VA-{n:03d}" for n in range(1, VAULT_ENTRIES + 1)]
    # 1.x returns each page; 2.x follows nextCursor itself when asked without a cursor.
    expected_pages = [50, VAULT_ENTRIES - 50] if sdk == "sdk1" else [VAULT_ENTRIES]
    assert [len(page["resources"]) for page in seen["resourcePages"]] == expected_pages
    assert len(seen["reads"]) == VAULT_ENTRIES
    entries = structured(seen["calls"]["search_context"])["entries"]
    assert {entry["id"][:3] for entry in entries} <= {"VA-"}
    assert error_details(seen["calls"]["get_entry"])["error"] == "not_found"  # EG-202 is not the vault's


def test_without_the_key_the_sdk_reports_the_gateways_refusal(live: LiveServer) -> None:
    done = exercise(live, "client2", "auto", namespace="vault")

    assert done.returncode == 1
    assert "No such namespace" in done.stderr
