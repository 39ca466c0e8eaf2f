"""The MCP Server Card of a namespace (SEP-2127 draft, schema v2) and the domain's MCP Catalog.

The card is served at ``<streamable-http-url>/server-card`` (the location SEP-2127 reserves) and, for
clients that follow the earlier SEP-1649 draft, at ``/.well-known/mcp/server-card.json``; the catalog at
``/.well-known/mcp/catalog.json`` points to it. Identity and versions match what ``initialize`` and
``server/discover`` answer (mcp_methods.server_info), as the draft asks.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import urlsplit

from knowledge.retrieval.contract.records import AgentNamespace

SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/v2/server-card.schema.json"
MEDIA_TYPE: Final = "application/mcp-server-card+json"
CARD_PATH: Final = "/mcp/server-card"
WELL_KNOWN_CARD_PATH: Final = "/.well-known/mcp/server-card.json"
CATALOG_PATH: Final = "/.well-known/mcp/catalog.json"
TEXT_MAX: Final = 100  # the schema's maxLength of description and title
_NOT_IN_NAME: Final = re.compile(r"[^a-zA-Z0-9.-]")


def _short(text: str) -> str:
    text = " ".join(text.split()) or "-"
    return text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1].rstrip() + "…"


def _host(base_url: str) -> str:
    return (urlsplit(base_url).hostname or "localhost").lower()


def _namespace(host: str) -> str:
    """Reverse-DNS of a domain (``evergreen.example.com`` → ``com.example.evergreen``); an IP address as is.

    An address has no labels to reverse (``127.0.0.1`` stays ``127.0.0.1``, as the catalog's identifier
    has it); in an IPv6 address each character the v2 schema's name pattern
    (``^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$``) does not allow, ``:`` or a zone's ``%``, is written ``-``.
    """
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return ".".join(reversed([label for label in host.split(".") if label]))
    return _NOT_IN_NAME.sub("-", str(address))


def card_name(info: AgentNamespace) -> str:
    """The host as a reverse-DNS namespace, then the server's name: ``com.example.evergreen/evergreen-<slug>``."""
    return _namespace(_host(info.base_url)) + f"/evergreen-{info.slug}"


def build_server_card(info: AgentNamespace, *, versions: Sequence[str]) -> dict[str, Any]:
    remote: dict[str, Any] = {
        "type": "streamable-http",
        "url": f"{info.base_url}/mcp",
        "supportedProtocolVersions": list(versions),
    }
    if not info.public:
        remote["headers"] = [
            {
                "name": "Authorization",
                "description": "The namespace API key (private namespace).",
                "isRequired": True,
                "isSecret": True,
                "value": "Bearer {key}",
                "variables": {"key": {"description": "A key of this namespace.", "isRequired": True, "isSecret": True}},
            }
        ]
    return {
        "$schema": SCHEMA,
        "name": card_name(info),
        "version": info.knowledge_version,
        "title": _short(info.title),
        "description": _short(info.summary),
        "websiteUrl": info.base_url,
        "remotes": [remote],
    }


def build_catalog(info: AgentNamespace) -> dict[str, Any]:
    """An MCP Catalog (draft) with this namespace's one server."""
    return {
        "specVersion": "draft",
        "entries": [
            {
                "identifier": f"urn:air:{_host(info.base_url)}:evergreen-{info.slug}",
                "displayName": _short(info.title),
                "type": MEDIA_TYPE,
                "url": f"{info.base_url}{CARD_PATH}",
            }
        ],
    }
