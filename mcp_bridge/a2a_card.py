"""The A2A v0.3.0 AgentCard of a namespace (seed §5 ③), served at /.well-known/agent-card.json."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from knowledge.retrieval.contract.records import AgentNamespace
from mcp_bridge import schemas
from mcp_bridge.a2a_extensions import CITATION, TOKEN_BUDGET, extension_uri
from mcp_bridge.tools import Tool

PROTOCOL_VERSION: Final = "0.3.0"
WELL_KNOWN_PATH: Final = "/.well-known/agent-card.json"
# Where the Django side mounts the A2A JSON-RPC endpoint, below the namespace's base URL.
A2A_PATH: Final = "/a2a"
INPUT_MODES: Final = ("text/plain", "application/json")
OUTPUT_MODES: Final = ("application/json", "text/plain")

API_KEY_SCHEME: Final = "apiKey"

CARD_DESCRIPTION: Final = (
    "{summary}\n\nSend a message: a text part is the topic; one data part (one skill call per message) may carry "
    '{{"topic", "budget", "category", "limit", "budgetMode", "paths"}} (paths: the files the agent works on) '
    'or {{"skill", "arguments"}} to call another skill. '
    "The answer is a completed task whose artifact holds the JSON result as a data part and a short text "
    "part (for a search: the citations). Tasks are kept for {retention}."
)
PUBLIC_ACCESS: Final = "Public namespace: no credentials are needed."
PRIVATE_ACCESS: Final = "Private namespace: send the namespace API key as Authorization: Bearer <key>."


def _extensions(rules: Sequence[str], info: AgentNamespace) -> list[dict[str, Any]]:
    token_budget = {
        "uri": extension_uri(info.base_url, TOKEN_BUDGET),
        "description": "Answers are packed to a token budget; put budget (tokens) in the message's data part.",
        "required": False,
        "params": {
            "field": "budget",
            "unit": "tokens",
            "default": schemas.BUDGET_DEFAULT,
            "minimum": schemas.BUDGET_MIN,
            "maximum": schemas.BUDGET_MAX,
            "clamped": True,
            "estimator": "round(CJK characters x 1.0 + other characters x 0.28)",
        },
    }
    citation = {
        "uri": extension_uri(info.base_url, CITATION),
        "description": "Every entry has a stable ID and a citation; cite facts with the given marker.",
        "required": False,
        "params": {
            "field": "citations",
            "marker": f"[{info.id_prefix}-xxx]",
            "confidenceField": "confidence",
            "rules": list(rules),
        },
    }
    return [token_budget, citation]


def _skill(tool: Tool) -> dict[str, Any]:
    """A skill mirrors an MCP tool (same id and name), called via ``data.skill``; its errors in A2A terms."""
    skill: dict[str, Any] = {
        "id": tool.name,
        "name": tool.title,
        "description": tool.a2a_description(),
        "tags": list(tool.tags),
        "inputModes": list(INPUT_MODES),
        "outputModes": list(OUTPUT_MODES),
    }
    if tool.examples:
        skill["examples"] = list(tool.examples)
    return skill


def _security(info: AgentNamespace) -> dict[str, Any]:
    """OpenAPI security requirements (v0.3.0 §5.5): ``[{}]`` means no credentials are required."""
    if info.public:
        return {"securitySchemes": {}, "security": [{}]}
    scheme = {"type": "http", "scheme": "bearer", "bearerFormat": "API key", "description": PRIVATE_ACCESS}
    return {"securitySchemes": {API_KEY_SCHEME: scheme}, "security": [{API_KEY_SCHEME: []}]}


def _duration(seconds: int) -> str:
    if seconds >= 7200:
        return f"{seconds // 3600} hours"
    return f"{max(seconds // 60, 1)} minutes"


def build_agent_card(
    info: AgentNamespace, tools: Sequence[Tool], rules: Sequence[str], *, retention_seconds: int
) -> dict[str, Any]:
    """A strict v0.3.0 AgentCard; ``url`` serves JSON-RPC, as ``preferredTransport`` says (§5.6.1)."""
    url = info.base_url + A2A_PATH
    access = PUBLIC_ACCESS if info.public else PRIVATE_ACCESS
    description = CARD_DESCRIPTION.format(summary=info.summary, retention=_duration(retention_seconds))
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "name": info.title,
        "description": f"{description} {access}",
        "url": url,
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [{"url": url, "transport": "JSONRPC"}],
        "version": info.knowledge_version,
        "provider": {"organization": info.organization, "url": info.base_url},
        "documentationUrl": info.base_url + "/llms.txt",
        "capabilities": {
            "streaming": False,
            "pushNotifications": False,
            "stateTransitionHistory": False,
            "extensions": _extensions(rules, info),
        },
        **_security(info),
        "defaultInputModes": list(INPUT_MODES),
        "defaultOutputModes": list(OUTPUT_MODES),
        "skills": [_skill(tool) for tool in tools],
        "supportsAuthenticatedExtendedCard": False,
    }
