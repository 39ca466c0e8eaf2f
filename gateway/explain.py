"""/api/context?…&explain=1[&why=EG-001,EG-002] and MCP explain_context: the pack with why it is what it is."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from gateway.declared import Parameter
from gateway.entries import normalize_entry_id
from gateway.gate import Gate
from knowledge.retrieval.explain import explain_context
from knowledge.retrieval.payload import ContextQuery, context_pack, context_payload
from knowledge.selectors.explain import entries_not_released

WHY_MAX = 20
WHY_TOO_MANY = "why names at most 20 entry IDs."
EXPLAIN = Parameter("explain", {"type": "string", "enum": ["1", "0", "true", "false"]}, "1 adds an `explain` object.")
WHY = Parameter(
    "why",
    {"type": "string", "maxLength": 2000},
    "With explain: up to 20 comma-separated entry IDs to explain (more: 400 too_many_ids).",
    {"too_many_ids": WHY_TOO_MANY},
)


def explain_asked(query_string: str) -> tuple[bool, list[str]]:
    """(explain?, the IDs asked about) from the raw query string; cheap when neither is there."""
    if "explain=" not in query_string and "why=" not in query_string:
        return False, []
    values = dict(parse_qsl(query_string, keep_blank_values=True))
    explain = values.get("explain", "").strip().lower() not in ("", "0", "false", "no")
    return explain or "why" in values, why_parse(values.get("why", ""))


def why_parse(raw: str | list[str]) -> list[str]:
    items = raw.split(",") if isinstance(raw, str) else raw
    ids = [normalize_entry_id(item) for item in items if str(item).strip()]
    if len(ids) > WHY_MAX:
        raise WHY.refusal("too_many_ids")
    return ids


def explained_document(gate: Gate, query: ContextQuery, asked: list[str]) -> dict[str, Any]:
    """The /api/context document of this query plus its explanation (ranked and packed again: deterministic)."""
    release = gate.release
    ranking, pack = context_pack(index=release.index, view=release.view, query=query)
    document = context_payload(query=query, ranking=ranking, pack=pack, view=release.view)
    unreleased = entries_not_released(
        namespace_id=gate.namespace.id, ids=asked, released=(entry_id for entry_id in asked if release.entry(entry_id))
    )
    document["explain"] = explain_context(
        index=release.index,
        view=release.view,
        query=query,
        ranking=ranking,
        pack=pack,
        asked=asked,
        retired={stone.id: stone.replaced_by for stone in release.snapshot.tombstones},
        unpublished=unreleased,
    )
    return document
