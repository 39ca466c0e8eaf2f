"""The contract's plain records that need nothing from the engine: a tombstone and the namespace an agent sees."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Tombstone:
    """A retired entry: agents get 410 Gone with this body (seed §6)."""

    id: str
    title: str
    retired_at: str
    reason: str
    replaced_by: str | None


@dataclass(frozen=True, slots=True)
class AgentNamespace:
    """Who the namespace is, as one request addressed it. ``base_url`` is absolute, without a trailing
    slash, and includes any ``/t/<namespace>`` prefix, so ``base_url + "/mcp"`` is its MCP endpoint."""

    slug: str
    title: str
    summary: str
    base_url: str
    language: str
    knowledge_version: str
    public: bool
    id_prefix: str
    categories: tuple[str, ...]
    organization: str
