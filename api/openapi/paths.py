"""Every public route as an OpenAPI 3.1 path item, with the parameter rules the views really enforce.

The parameters and their 400 codes are the views' own declarations (gateway.declared: gateway.params,
gateway.entries, gateway.changes, gateway.verify, api.views), so a client generated from this document
and a validator checking answers agree with the server: an unknown category, a fraction for budget or a
repeated parameter is a 400 with a code listed for its operation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from api.openapi import shapes
from api.openapi.components import (
    HTML,
    JSON,
    MARKDOWN,
    READ_HEADERS,
    RELEASE,
    SECTION_10,
    TEXT,
    bad_request,
    error_response,
    error_schema,
    ok,
    path_param,
    standard_refusals,
)
from api.views.browse import BROWSE
from api.views.files import PROMPT_PACK
from api.views.pages import PLAYGROUND
from gateway.changes import CHANGES
from gateway.declared import Enums
from gateway.entries import ENTRY, ENTRY_PAGE
from gateway.params import CONTEXT
from gateway.verify import VERIFY

# One entry ID (case does not matter: ids are upper-cased); no dot, so `EG-202.md` is the Markdown route's.
ENTRY_ID = {"type": "string", "pattern": "^[A-Za-z][A-Za-z0-9]{0,15}-[0-9]{1,9}$", "examples": ["EG-202"]}
SLUG = {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$", "examples": ["rules-budget"]}
SERVER_CARD = "application/mcp-server-card+json"
ROOT_ONLY = [{"url": "/", "description": "Served at the root only, not under /t/{namespace}/."}]


def _get(
    operation_id: str,
    summary: str,
    responses: dict[str, Any],
    *,
    parameters: Sequence[dict[str, Any]] = (),
    description: str = "",
    release: bool = True,
    tags: Sequence[str] = ("agents",),
) -> dict[str, Any]:
    """A read operation: GET (HEAD answers its headers), 304 on If-None-Match, the common refusals."""
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "tags": list(tags),
        "parameters": [*parameters, *([RELEASE] if release else [])],
        "responses": {
            **standard_refusals(release=release),
            **({"400": bad_request(())} if release else {}),
            "304": {"description": "Not modified: the If-None-Match ETag is current."},
            **responses,
        },
    }
    if description:
        operation["description"] = description
    return {"get": operation}


FILE_HEADERS = (*READ_HEADERS, "Accept-Ranges")
RANGES = (
    "Large files stream from storage. `Range: bytes=<first>-<last>` (one range; `bytes=<first>-` for the rest, "
    "`bytes=-<n>` for the last n) answers 206 with those bytes, so a client that lost a download asks for the rest; "
    "`If-Range` with another ETag answers the whole current file."
)


def _file_responses(summary: str, content: dict[str, Any]) -> dict[str, Any]:
    """200, and 206/416 for byte ranges (gateway.ranges)."""
    return {
        "200": ok(summary, content, headers=FILE_HEADERS),
        "206": ok("The byte range asked for.", content, headers=(*FILE_HEADERS, "Content-Range")),
        "416": error_response(
            "The range starts past the end of the file.",
            ["range_not_satisfiable"],
            headers=(*SECTION_10, "Content-Range"),
        ),
    }


def _file(operation_id: str, summary: str, media: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """A release artifact served byte for byte (its stored ETag)."""
    responses = _file_responses(summary, {media: {"schema": schema or shapes.STRING}})
    return _get(operation_id, summary, responses, description=RANGES)


def _category_file(operation_id: str, summary: str, categories: Sequence[str] | None) -> dict[str, Any]:
    schema = {"type": "string", "enum": list(categories)} if categories is not None else SLUG
    parameters = [path_param("category", schema, "A category of the namespace (others answer 404).")]
    responses = _file_responses(summary, {MARKDOWN: {"schema": shapes.STRING}})
    return _get(operation_id, summary, responses, parameters=parameters, description=RANGES)


def _page(content: dict[str, Any] | None = None) -> dict[str, Any]:
    """A human page; Accept: text/markdown on its URL answers the Markdown twin (Vary: Accept)."""
    return content or {HTML: {"schema": shapes.STRING}, MARKDOWN: {"schema": shapes.STRING}}


def _context(enums: Enums) -> dict[str, Any]:
    responses = {
        "200": ok("The pack (seed §4 plus the additive fields of docs/api.md).", {JSON: {"schema": shapes.CONTEXT}}),
        "400": bad_request(CONTEXT.codes()),
    }
    parameters = CONTEXT.openapi(enums)
    return _get("context_get", "A token-budgeted, cited fact pack (seed §4)", responses, parameters=parameters)


def _or_expired(media: str, gone: dict[str, Any]) -> dict[str, Any]:
    """An entry's 410: its tombstone, or the release_expired error of a pinned release too old to serve."""
    expired = error_schema(["release_expired"])
    if media == JSON:
        return {JSON: {"schema": {"anyOf": [gone, expired]}}}
    return {media: {"schema": gone}, JSON: {"schema": expired}}


def _entry(markdown: bool) -> dict[str, Any]:
    media = MARKDOWN if markdown else JSON
    if markdown:
        found, gone, missing = shapes.STRING, shapes.STRING, shapes.STRING
    else:
        found, gone, missing = shapes.ENTRY, shapes.TOMBSTONE, shapes.MISSING
    parameters = [
        path_param("entry_id", ENTRY_ID, "An entry ID such as EG-202 (any other text answers 404)."),
        *ENTRY.openapi(),
    ]
    responses = {
        "200": ok("The published entry.", {media: {"schema": found}}),
        "400": bad_request(ENTRY.codes()),
        "404": {
            "description": "No such ID here (IDs of other namespaces answer alike), with the three nearest IDs; "
            "or no such namespace.",
            "headers": ok("", {})["headers"],
            "content": {media: {"schema": missing}},
        },
        "410": {
            "description": "Retired: the tombstone (reason, date, replacement). The ID is never reused. Or ?release= "
            "names a release past the retention window (JSON, release_expired).",
            "headers": ok("", {})["headers"],
            "content": _or_expired(media, gone),
        },
    }
    if markdown:
        return _get("entry_markdown_get", "One entry as Markdown", responses, parameters=parameters)
    return _get("entry_get", "One entry by ID (seed §6)", responses, parameters=parameters)


def _index(operation_id: str, summary: str) -> dict[str, Any]:
    responses = {"200": ok("The page.", _page()), "400": bad_request(PLAYGROUND.codes())}
    return _get(operation_id, summary, responses, parameters=PLAYGROUND.openapi())


def _entry_page(markdown: bool) -> dict[str, Any]:
    content = {MARKDOWN: {"schema": shapes.STRING}} if markdown else _page()
    either = {**content, JSON: {"schema": shapes.ERROR}}
    parameters = [path_param("entry_id", ENTRY_ID, "An entry ID such as EG-202.")]
    responses = {
        "200": ok("The entry's page.", content),
        "404": ok("No such entry (with the nearest IDs), or no such namespace (JSON).", either),
        "410": ok("Retired: the tombstone's page, or a release past retention (JSON).", either),
        "400": bad_request(ENTRY_PAGE.codes()),
    }
    name = "entry_page_markdown_get" if markdown else "entry_page_get"
    return _get(name, "An entry's page" + (" as Markdown" if markdown else ""), responses, parameters=parameters)


def _doc(markdown: bool) -> dict[str, Any]:
    content = {MARKDOWN: {"schema": shapes.STRING}} if markdown else _page()
    responses = {"200": ok("The documentation page.", content), "400": bad_request(())}
    name = "doc_markdown_get" if markdown else "doc_get"
    parameters = [path_param("slug", SLUG, "The page's slug (see the index's Docs section).")]
    return _get(name, "A documentation page" + (" as Markdown" if markdown else ""), responses, parameters=parameters)


def _browse(enums: Enums) -> dict[str, Any]:
    responses = {"200": ok("One page of the entry list.", _page()), "400": bad_request(BROWSE.codes())}
    parameters = BROWSE.openapi(enums)
    return _get("entries_browse_get", "Every entry, searchable, 50 a page", responses, parameters=parameters)


def _prompt_pack(enums: Enums) -> dict[str, Any]:
    responses = {
        "200": ok("Paste-in instructions for an assistant.", {TEXT: {"schema": shapes.STRING}}),
        "400": bad_request(PROMPT_PACK.codes()),
    }
    parameters = PROMPT_PACK.openapi(enums)
    return _get("prompt_pack_get", "Instructions for an assistant (seed §5 ①)", responses, parameters=parameters)


def _changes() -> dict[str, Any]:
    responses = {
        "200": ok("One page of changes.", {JSON: {"schema": shapes.CHANGES}}),
        "400": bad_request(CHANGES.codes()),
    }
    parameters = CHANGES.openapi()
    return _get("changes_get", "What changed per entry since a release", responses, parameters=parameters)


def _verify() -> dict[str, Any]:
    operation = {
        "operationId": "verify_post",
        "summary": "Check an answer's [ID] citations against the release or pack it was written from",
        "tags": ["agents"],
        "requestBody": {"required": True, "content": {JSON: {"schema": VERIFY.body_schema()}}},
        "responses": {
            "200": ok("The report (Cache-Control: no-store).", {JSON: {"schema": shapes.VERIFY}}, headers=SECTION_10),
            "400": bad_request(VERIFY.codes(), release=False),
            "413": error_response("The body is over EVERGREEN_MCP_MAX_BODY_BYTES.", ["body_too_large"]),
            **standard_refusals(release=False),
        },
    }
    return {"post": operation}


def _json_rpc(operation_id: str, summary: str, description: str, spec: str) -> dict[str, Any]:
    message = {"type": "object", "required": ["jsonrpc"], "properties": {"jsonrpc": {"const": "2.0"}}}
    return {
        "post": {
            "operationId": operation_id,
            "summary": summary,
            "description": description,
            "tags": ["protocols"],
            "externalDocs": {"url": spec},
            "requestBody": {"required": True, "content": {JSON: {"schema": message}}},
            "responses": {
                "200": {"description": "A JSON-RPC 2.0 result or error.", "content": {JSON: {"schema": message}}},
                "202": {"description": "A notification or response was accepted (no body)."},
                "400": {"description": "Unreadable JSON-RPC, or a refused protocol version (JSON-RPC error)."},
                "403": error_response("A browser Origin that is not allowed.", ["origin_refused"]),
                "404": {"$ref": "#/components/responses/NotFound"},
                "405": {"$ref": "#/components/responses/MethodNotAllowed"},
                "413": {"description": "The body is over EVERGREEN_MCP_MAX_BODY_BYTES."},
                "429": {"$ref": "#/components/responses/RateLimited"},
            },
        }
    }


def _operations_root() -> dict[str, Any]:
    text = {JSON: {"schema": {"type": "object"}}}
    health = shapes.obj({"status": {"enum": ["ok", "degraded"]}, "database": shapes.STRING, "cache": shapes.STRING})
    return {
        "/api/schema/": {
            "servers": ROOT_ONLY,
            **_get("openapi_get", "This document (OpenAPI 3.1, JSON)", {"200": ok("The document.", text)}),
        },
        "/api/docs/": {
            "servers": ROOT_ONLY,
            **_get(
                "api_docs_get", "This document as a page", {"200": ok("The page.", {HTML: {"schema": shapes.STRING}})}
            ),
        },
        "/healthz": {
            "servers": ROOT_ONLY,
            "get": {
                "operationId": "healthz_get",
                "summary": "Whether this process serves, and each dependency's state (Cache-Control: no-store)",
                "tags": ["operations"],
                "responses": {
                    "200": ok(
                        "Serving (from memory if a dependency fails).", {JSON: {"schema": health}}, headers=SECTION_10
                    ),
                    "503": ok(
                        "Not serving: no database and nothing in memory.",
                        {JSON: {"schema": health}},
                        headers=SECTION_10,
                    ),
                },
            },
        },
        "/readyz": {
            "servers": ROOT_ONLY,
            "get": {
                "operationId": "readyz_get",
                "summary": "The same report; 200 only when PostgreSQL and Redis answer (Cache-Control: no-store)",
                "tags": ["operations"],
                "responses": {
                    "200": ok("Every dependency answers.", {JSON: {"schema": health}}, headers=SECTION_10),
                    "503": ok("Degraded: a check failed.", {JSON: {"schema": health}}, headers=SECTION_10),
                },
            },
        },
        "/metrics": {
            "servers": ROOT_ONLY,
            "get": {
                "operationId": "prometheus_get",
                "summary": "Operations metrics in Prometheus' text format",
                "description": "Needs Authorization: Bearer $EVERGREEN_METRICS_TOKEN; 404 when that is unset.",
                "tags": ["operations"],
                "security": [{"metricsToken": []}],
                "responses": {
                    "200": {"description": "Prometheus text.", "content": {TEXT: {"schema": shapes.STRING}}},
                    "401": {"description": "A wrong or missing token."},
                    "404": {"description": "EVERGREEN_METRICS_TOKEN is unset."},
                },
            },
        },
        "/a2a/extensions/{name}": {
            "servers": ROOT_ONLY,
            **_get(
                "a2a_extension_get",
                "The specification of an A2A extension the agent card declares",
                {"200": ok("The specification.", {MARKDOWN: {"schema": shapes.STRING}}, headers=SECTION_10)},
                parameters=[path_param("name", {"type": "string", "pattern": "^[-a-z0-9/.]+$"}, "The extension.")],
                release=False,
                tags=["protocols"],
            ),
        },
    }


def paths(*, categories: Sequence[str] | None, scenarios: Sequence[str] | None) -> dict[str, Any]:
    """Every public route; `categories`/`scenarios` are the namespace's (None: not known, any string)."""
    enums: Enums = {"categories": categories, "scenarios": scenarios or None}
    json_object = {"type": "object"}
    return {
        "/": _index("index_get", "The namespace's page: entries, Playground, JSON-LD"),
        "/index.html": _index("index_html_get", "The namespace's page (same as /)"),
        "/index.html.md": _file("index_markdown_get", "The namespace's page as Markdown", MARKDOWN),
        "/entries/": _browse(enums),
        "/entries/{entry_id}": _entry_page(markdown=False),
        "/entries/{entry_id}.md": _entry_page(markdown=True),
        "/docs/{slug}": _doc(markdown=False),
        "/docs/{slug}.md": _doc(markdown=True),
        "/metrics.html": _get("metrics_page_get", "Measurements as charts", {"200": ok("The page.", _page())}),
        "/api/context": _context(enums),
        "/api/entries/{entry_id}": _entry(markdown=False),
        "/api/entries/{entry_id}.md": _entry(markdown=True),
        "/api/changes": _changes(),
        "/api/verify": _verify(),
        "/api/prompt-pack": _prompt_pack(enums),
        "/api/metrics": _get("metrics_get", "Measured costs and quality", {"200": ok("Metrics.", _metrics())}),
        "/metrics.json": _get("metrics_json_get", "Measured costs and quality", {"200": ok("Metrics.", _metrics())}),
        "/llms.txt": _file("llms_txt_get", "The llms.txt index with each entry's token cost", MARKDOWN),
        "/llms-full.txt": _file("llms_full_txt_get", "Every entry's full text in the llms.txt format", MARKDOWN),
        "/llms/{category}.txt": _category_file("llms_category_get", "One category's llms.txt", categories),
        "/llms-full/{category}.txt": _category_file(
            "llms_full_category_get", "One category's llms-full.txt", categories
        ),
        "/themes/{theme}.md": _get(
            "theme_md_get",
            "One theme's entries in full (linked from llms.txt's Themes section)",
            _file_responses("The theme file.", {MARKDOWN: {"schema": shapes.STRING}}),
            parameters=[path_param("theme", SLUG, "A theme of the namespace (others answer 404).")],
            description=RANGES,
        ),
        "/themes/{layer}/{theme}.md": _get(
            "layer_theme_md_get",
            "A base namespace's theme, with the base's entries this namespace serves (linked from llms.txt)",
            _file_responses("The theme file.", {MARKDOWN: {"schema": shapes.STRING}}),
            parameters=[
                path_param("layer", SLUG, "A base namespace this one builds on."),
                path_param("theme", SLUG, "A theme of that base (others answer 404)."),
            ],
            description=RANGES,
        ),
        "/context.json": _file(
            "context_json_get", "The whole knowledge base (see /schemas/knowledge.schema.json)", JSON, json_object
        ),
        "/schemas/knowledge.schema.json": _file(
            "knowledge_schema_get", "The JSON Schema of context.json", JSON, json_object
        ),
        "/ai-policy.json": _file("ai_policy_get", "The AI usage policy", JSON, json_object),
        "/ai.txt": _file("ai_txt_get", "The statement for AI crawlers", TEXT),
        "/robots.txt": _file("robots_txt_get", "Crawler rules (AI agents allowed)", TEXT),
        "/sitemap.xml": _file(
            "sitemap_get",
            "The sitemap; above 50,000 URLs a sitemap index of /sitemaps/{number}.xml (sitemaps.org)",
            "application/xml",
        ),
        "/sitemaps/{number}.xml": _get(
            "sitemap_part_get",
            "One file of the sitemap index, at most 50,000 URLs",
            _file_responses("The sitemap file.", {"application/xml": {"schema": shapes.STRING}}),
            parameters=[
                path_param(
                    "number",
                    {"type": "integer", "minimum": 0},
                    "1, 2 … as sitemap.xml lists them; a namespace with one sitemap file has none (404).",
                )
            ],
            description=RANGES,
        ),
        "/.well-known/agent-card.json": {
            **_get(
                "agent_card_get",
                "The A2A v0.3.0 agent card",
                {"200": ok("The card.", {JSON: {"schema": json_object}})},
                tags=["protocols"],
            ),
        },
        "/.well-known/llms.txt": _file("well_known_llms_txt_get", "llms.txt at its well-known location", MARKDOWN),
        "/mcp/server-card": _get(
            "mcp_server_card_get",
            "The MCP Server Card (SEP-2127 draft): identity, endpoint, protocol versions",
            {"200": ok("The card.", {SERVER_CARD: {"schema": json_object}})},
            tags=["protocols"],
        ),
        "/.well-known/mcp/server-card.json": _get(
            "mcp_server_card_well_known_get",
            "The MCP Server Card at the SEP-1649 location",
            {"200": ok("The card.", {SERVER_CARD: {"schema": json_object}})},
            tags=["protocols"],
        ),
        "/.well-known/mcp/catalog.json": _get(
            "mcp_catalog_get",
            "The MCP Catalog (draft) naming the server card",
            {"200": ok("The catalog.", {JSON: {"schema": json_object}})},
            tags=["protocols"],
        ),
        "/mcp": _json_rpc(
            "mcp_post",
            "MCP over Streamable HTTP (2025-11-25 and 2026-07-28)",
            "One JSON-RPC message per POST with Accept: application/json, text/event-stream; tools, resources "
            "and prompts as described in docs/protocols.md.",
            "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports",
        ),
        "/a2a": _json_rpc(
            "a2a_post",
            "A2A v0.3.0 JSON-RPC (message/send, tasks/get, tasks/cancel)",
            "The agent card's `url`; its skills call the same tools as MCP.",
            "https://a2a-protocol.org/v0.3.0/specification/",
        ),
        **_operations_root(),
    }


def _metrics() -> dict[str, Any]:
    return {JSON: {"schema": shapes.METRICS}}
