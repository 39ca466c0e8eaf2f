"""/api/context?…&explain=1[&why=EG-001,EG-002] and MCP explain_context: the pack with why it is what it is."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from gateway.declared import REPEATED, Parameter
from gateway.entries import normalize_entry_id
from gateway.gate import Gate
from knowledge.retrieval.explain import explain_context
from knowledge.retrieval.payload import ContextQuery, context_pack, context_payload
from knowledge.selectors.explain import entries_not_released

WHY_MAX = 20
WHY_TOO_MANY = "why names at most 20 entry IDs."
EXPLAIN_VALUES = ("1", "0", "true", "false")
EXPLAIN_INVALID = "explain must be 1, 0, true or false."
EXPLAIN = Parameter(
    "explain",
    {"type": "string", "enum": list(EXPLAIN_VALUES)},
    "1 adds an `explain` object.",
    {"invalid_explain": EXPLAIN_INVALID, "repeated_parameter": REPEATED},
)
WHY = Parameter(
    "why",
    {"type": "string", "maxLength": 2000},
    "With explain: up to 20 comma-separated entry IDs to explain (more: 400 too_many_ids).",
    {"too_many_ids": WHY_TOO_MANY, "repeated_parameter": REPEATED},
)
_ONCE = {EXPLAIN.name: EXPLAIN, WHY.name: WHY}


def explain_asked(query_string: str) -> tuple[bool, list[str]]:
    """(explain?, the IDs asked about) from the raw query string; cheap when neither is there.

    explain takes exactly the values /api/schema/ lists (empty: not sent); anything else, or either
    parameter sent twice, is refused rather than guessed at (issue 9: no input is guessed at).
    """
    if "explain=" not in query_string and "why=" not in query_string:
        return False, []
    values: dict[str, str] = {}
    for name, value in parse_qsl(query_string, keep_blank_values=True):
        declared = _ONCE.get(name)
        if declared is not None and name in values:
            raise declared.refusal("repeated_parameter", param=name)
        values[name] = value
    explain = values.get(EXPLAIN.name, "")
    if explain and explain not in EXPLAIN_VALUES:
        raise EXPLAIN.refusal("invalid_explain")
    return explain in ("1", "true") or WHY.name in values, why_parse(values.get(WHY.name, ""))


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
