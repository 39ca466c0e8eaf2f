"""The MCP methods Evergreen serves, each turning validated params into a result object."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from knowledge.retrieval.contract.lookups import EntryFound, EntryGone
from knowledge.retrieval.contract.records import AgentNamespace
from mcp_bridge.jsonrpc import INVALID_PARAMS, JsonRpcError
from mcp_bridge.ports import Backend
from mcp_bridge.tools import build_tools, call_tool, find_tool, render_mcp

# 2025-11-25 server/resources.mdx §Error Handling; retired in 2026-07-28 (basic/index.mdx, replaced by -32602).
RESOURCE_NOT_FOUND_LEGACY: Final = -32002

URI_SCHEME: Final = "evergreen://"
ENTRY_MIME_TYPE: Final = "text/markdown"
RESOURCE_PAGE_SIZE: Final = 50
_CURSOR_PREFIX: Final = "e1."
_CURSOR_ID: Final = re.compile(r"[\x21-\x7e]{1,64}")

UNKNOWN_TOOL_MESSAGE: Final = "Unknown tool: {name}"
UNKNOWN_PROMPT_MESSAGE: Final = "Unknown prompt: {name}"
RESOURCE_NOT_FOUND_MESSAGE: Final = "Resource not found"
RESOURCE_GONE_MESSAGE: Final = "Resource not found: {id} was retired"
INVALID_CURSOR_MESSAGE: Final = "Invalid cursor"
PARAM_REQUIRED_MESSAGE: Final = "params.{name} must be {kind}"
CLIENT_INFO_KIND: Final = "an Implementation object with string name and version"

INSTRUCTIONS_TEMPLATE: Final = """{title}: {summary}

How to use this server:
- Before answering anything this knowledge base covers, call search_context with keywords from the question. \
budget is in tokens (default 2000, clamped to 200-8000).
- matched=false means nothing matched: the returned entries are a fallback; do not cite them, say the knowledge \
base has no such entry.
- truncated=true means the budget cut entries out: call again with a larger budget or a narrower query before \
answering.
- Call get_entry for an entry's full text (resources evergreen://{slug}/<ID> hold the same as Markdown). Cite \
only IDs that appeared in a response.
- get_prompt_pack returns system-prompt rules per scenario; submit_feedback reports outdated or wrong entries to \
the editors and never changes published content.

Citation rules of this knowledge base:
{rules}"""

CAPABILITIES: Final = {
    "tools": {"listChanged": False},
    "resources": {"subscribe": False, "listChanged": False},
    "prompts": {"listChanged": False},
}


@dataclass(frozen=True)
class Call:
    """One request as the methods see it: the backend, the params, and which era answers."""

    backend: Backend
    params: Mapping[str, Any]
    modern: bool


def server_info(info: AgentNamespace) -> dict[str, Any]:
    """``Implementation``: the namespace served by Evergreen, versioned by its knowledge version."""
    return {
        "name": f"evergreen-{info.slug}",
        "title": info.title,
        "version": info.knowledge_version,
        "websiteUrl": info.base_url,
    }


def instructions(backend: Backend) -> str:
    """Server ``instructions``: when to use the tools and the namespace's rules; never entry text."""
    info = backend.namespace()
    rules = "\n".join(f"{n}. {rule}" for n, rule in enumerate(backend.rules(), start=1))
    return INSTRUCTIONS_TEMPLATE.format(title=info.title, summary=info.summary, slug=info.slug, rules=rules)


def _param_error(name: str, kind: str) -> JsonRpcError:
    return JsonRpcError(
        INVALID_PARAMS, PARAM_REQUIRED_MESSAGE.format(name=name, kind=kind), {"param": f"params.{name}"}
    )


def _string_param(params: Mapping[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise _param_error(name, "a string")
    return value


def _invalid_cursor() -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, INVALID_CURSOR_MESSAGE, {"param": "params.cursor"}, reason="invalid_cursor")


def _no_cursor(call: Call) -> None:
    """Lists that fit in one page accept no cursor (pagination.mdx: invalid cursors → -32602)."""
    if call.params.get("cursor") is not None:
        raise _invalid_cursor()


def encode_cursor(after: str) -> str:
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(after.encode()).decode().rstrip("=")


def decode_cursor(cursor: object) -> str:
    if not isinstance(cursor, str) or not cursor.startswith(_CURSOR_PREFIX):
        raise _invalid_cursor()
    payload = cursor.removeprefix(_CURSOR_PREFIX)
    try:
        after = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise _invalid_cursor() from exc
    if not _CURSOR_ID.fullmatch(after) or encode_cursor(after) != cursor:
        raise _invalid_cursor()
    return after


def _initialize_params_check(params: Mapping[str, Any]) -> None:
    """``InitializeRequestParams``: protocolVersion, capabilities and clientInfo {name, version} are required.

    No stricter than the official Python SDK's server (``InitializeRequestParams.model_validate``): the
    capabilities' members and clientInfo's other fields (title, description, icons…) are optional.
    """
    _string_param(params, "protocolVersion")
    if not isinstance(params.get("capabilities"), dict):
        raise _param_error("capabilities", "an object")
    client = params.get("clientInfo")
    if not (
        isinstance(client, dict) and isinstance(client.get("name"), str) and isinstance(client.get("version"), str)
    ):
        raise _param_error("clientInfo", CLIENT_INFO_KIND)


def initialize(call: Call, supported: Sequence[str], latest: str) -> dict[str, Any]:
    """2025-11-25 lifecycle.mdx §Version Negotiation: echo a supported version, else offer the latest."""
    _initialize_params_check(call.params)
    requested = call.params["protocolVersion"]
    version = requested if requested in supported else latest
    return {
        "protocolVersion": version,
        "capabilities": CAPABILITIES,
        "serverInfo": server_info(call.backend.namespace()),
        "instructions": instructions(call.backend),
    }


def ping(call: Call) -> dict[str, Any]:
    return {}


def discover(call: Call, supported: Sequence[str]) -> dict[str, Any]:
    """2026-07-28 ``server/discover``; the cache fields are added by the caller for every cacheable result."""
    return {
        "supportedVersions": list(supported),
        "capabilities": CAPABILITIES,
        "instructions": instructions(call.backend),
    }


def tools_list(call: Call) -> dict[str, Any]:
    _no_cursor(call)
    return {"tools": [tool.definition() for tool in build_tools(call.backend.namespace())]}


def tools_call(call: Call) -> dict[str, Any]:
    """tools.mdx §Error Handling: unknown tool / malformed request → -32602; the rest is a tool result.

    Argument values no handler may meet (a NUL…) are input validation errors like the schema's, so a tool
    result too (SEP-1303); ``protocol`` leaves them to ``call_tool``, which refuses them before any handler.
    """
    name = _string_param(call.params, "name")
    arguments = call.params.get("arguments")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise _param_error("arguments", "an object")
    tool = find_tool(build_tools(call.backend.namespace()), name)
    if tool is None:
        raise JsonRpcError(
            INVALID_PARAMS, UNKNOWN_TOOL_MESSAGE.format(name=name), {"name": name}, reason="unknown_tool"
        )
    return render_mcp(call_tool(tool, arguments, call.backend))


def entry_uri(slug: str, entry_id: str) -> str:
    return f"{URI_SCHEME}{slug}/{entry_id}"


def start_of_day(day: str) -> str:
    """A ``YYYY-MM-DD`` date as the RFC 3339 date-time it begins (UTC)."""
    return f"{date.fromisoformat(day).isoformat()}T00:00:00Z"


def resources_list(call: Call) -> dict[str, Any]:
    cursor = call.params.get("cursor")
    after = None if cursor is None else decode_cursor(cursor)
    info = call.backend.namespace()
    page = call.backend.entry_page(after=after, size=RESOURCE_PAGE_SIZE)
    result: dict[str, Any] = {
        "resources": [
            {
                "uri": entry_uri(info.slug, item.id),
                "name": item.id,
                "title": item.title,
                "description": item.summary,
                "mimeType": ENTRY_MIME_TYPE,
                # The schema's lastModified is an ISO 8601 date-time; the TypeScript SDKs refuse the
                # whole list over a bare date, so the entry's `updated` day becomes its first moment.
                "annotations": {"lastModified": start_of_day(item.updated)},
            }
            for item in page.items
        ]
    }
    if page.next_after is not None:
        result["nextCursor"] = encode_cursor(page.next_after)
    return result


def resource_templates_list(call: Call) -> dict[str, Any]:
    _no_cursor(call)
    info = call.backend.namespace()
    template = {
        "uriTemplate": entry_uri(info.slug, "{id}"),
        "name": "entry",
        "title": "Entry by ID",
        "description": f"One entry of {info.title} as Markdown, by its stable ID (for example {info.id_prefix}-202).",
        "mimeType": ENTRY_MIME_TYPE,
    }
    return {"resourceTemplates": [template]}


def _not_found(call: Call, message: str, data: dict[str, Any], *, reason: str = "not_found") -> JsonRpcError:
    """``not_found`` or, with the tombstone, ``gone``: the codes get_entry's results carry."""
    return JsonRpcError(INVALID_PARAMS if call.modern else RESOURCE_NOT_FOUND_LEGACY, message, data, reason=reason)


def resources_read(call: Call) -> dict[str, Any]:
    """Another namespace's URI reads exactly like an ID that never existed (design: namespaces)."""
    uri = _string_param(call.params, "uri")
    info = call.backend.namespace()
    prefix = entry_uri(info.slug, "")
    entry_id = uri.removeprefix(prefix) if uri.startswith(prefix) else ""
    if not entry_id or "/" in entry_id:
        raise _not_found(call, RESOURCE_NOT_FOUND_MESSAGE, {"uri": uri})
    found = call.backend.entry(entry_id=entry_id, version=None)
    if isinstance(found, EntryGone):
        data = {"uri": uri, "tombstone": found.payload}
        raise _not_found(call, RESOURCE_GONE_MESSAGE.format(id=found.tombstone.id), data, reason="gone")
    if not isinstance(found, EntryFound):
        raise _not_found(call, RESOURCE_NOT_FOUND_MESSAGE, {"uri": uri})
    return {"contents": [{"uri": uri, "mimeType": ENTRY_MIME_TYPE, "text": found.markdown}]}


def prompts_list(call: Call) -> dict[str, Any]:
    _no_cursor(call)
    packs = call.backend.scenarios()
    return {"prompts": [{"name": p.scenario, "title": p.title, "description": p.description} for p in packs]}


def prompts_get(call: Call) -> dict[str, Any]:
    """prompts.mdx §Error Handling: an unknown prompt → -32602. Packs take no arguments."""
    name = _string_param(call.params, "name")
    arguments = call.params.get("arguments")
    if arguments is not None and not isinstance(arguments, dict):
        raise _param_error("arguments", "an object")
    pack = call.backend.prompt_pack(scenario=name)
    if pack is None:
        raise JsonRpcError(
            INVALID_PARAMS, UNKNOWN_PROMPT_MESSAGE.format(name=name), {"name": name}, reason="unknown_prompt"
        )
    return {
        "description": pack.info.description,
        "messages": [{"role": "user", "content": {"type": "text", "text": pack.text}}],
    }


Method = Callable[[Call], dict[str, Any]]

SHARED_METHODS: Final[Mapping[str, Method]] = {
    "tools/list": tools_list,
    "tools/call": tools_call,
    "resources/list": resources_list,
    "resources/read": resources_read,
    "resources/templates/list": resource_templates_list,
    "prompts/list": prompts_list,
    "prompts/get": prompts_get,
}
