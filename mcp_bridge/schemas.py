"""JSON Schemas (2020-12, MCP's default dialect) of the tools' arguments and structured results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

BUDGET_DEFAULT: Final = 2000
BUDGET_MIN: Final = 200
BUDGET_MAX: Final = 8000
LIMIT_MIN: Final = 1
LIMIT_MAX: Final = 50
QUERY_MAX_LENGTH: Final = 500
ENTRY_ID_MAX_LENGTH: Final = 64
# get_entry fetches up to this many IDs at once: a search's `omitted` list holds at most 20.
ENTRY_IDS_MAX: Final = 20
FEEDBACK_MESSAGE_MAX_LENGTH: Final = 2000
SCENARIOS: Final = ("chat", "coding", "research", "support")
FEEDBACK_KINDS: Final = ("outdated", "incorrect", "missing", "other")

_NULLABLE_STRING: Final = {"type": ["string", "null"]}


def search_input(categories: Sequence[str]) -> dict[str, Any]:
    """``search_context`` arguments; ``budget`` is clamped like ``/api/context`` (seed §4), not refused."""
    return {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "maxLength": QUERY_MAX_LENGTH,
                "description": "Keywords or a question (Chinese or English). Empty browses by ID.",
            },
            "limit": {
                "type": "integer",
                "minimum": LIMIT_MIN,
                "maximum": LIMIT_MAX,
                "description": f"At most this many entries ({LIMIT_MIN}-{LIMIT_MAX}). Default: no cap.",
            },
            "budget": {
                "type": "integer",
                "default": BUDGET_DEFAULT,
                "description": f"Token budget for the entries; clamped to [{BUDGET_MIN}, {BUDGET_MAX}].",
            },
            "category": {
                "type": "string",
                "enum": list(categories),
                "description": "Only entries of this category.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }


def entry_input(id_prefix: str) -> dict[str, Any]:
    """``id`` (with an optional ``version``) or ``ids``; exactly one is checked by the handler, since
    several model providers refuse ``oneOf``/``anyOf`` at the top of a tool's input schema."""
    entry_id = {"type": "string", "minLength": 1, "maxLength": ENTRY_ID_MAX_LENGTH}
    return {
        "type": "object",
        "properties": {
            "id": {**entry_id, "description": f"A stable entry ID such as {id_prefix}-202."},
            "version": {"type": "integer", "minimum": 1, "description": "A published version; default: current."},
            "ids": {
                "type": "array",
                "items": entry_id,
                "minItems": 1,
                "maxItems": ENTRY_IDS_MAX,
                "uniqueItems": True,
                "description": f"Up to {ENTRY_IDS_MAX} IDs at once (such as a search's omitted IDs), instead of id.",
            },
        },
        "additionalProperties": False,
    }


PROMPT_PACK_INPUT: Final = {
    "type": "object",
    "properties": {"scenario": {"type": "string", "enum": list(SCENARIOS)}},
    "required": ["scenario"],
    "additionalProperties": False,
}

NO_ARGUMENTS: Final = {"type": "object", "additionalProperties": False}

FEEDBACK_INPUT: Final = {
    "type": "object",
    "properties": {
        "entryId": {"type": "string", "minLength": 1, "maxLength": ENTRY_ID_MAX_LENGTH},
        "query": {"type": "string", "maxLength": QUERY_MAX_LENGTH},
        "kind": {"type": "string", "enum": list(FEEDBACK_KINDS)},
        "message": {"type": "string", "minLength": 1, "maxLength": FEEDBACK_MESSAGE_MAX_LENGTH},
    },
    "required": ["kind", "message"],
    "additionalProperties": False,
}

_ENTRY_FIELDS: Final = {
    "id": {"type": "string"},
    "category": {"type": "string"},
    "title": {"type": "string"},
    "summary": {"type": "string"},
    "body": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "tokens": {"type": "integer", "minimum": 0},
    "updated": {"type": "string"},
}

_ENTRY: Final = {
    "type": "object",
    "properties": _ENTRY_FIELDS,
    "required": list(_ENTRY_FIELDS),
}

_TOMBSTONE: Final = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "title": {"type": "string"},
        "retiredAt": {"type": "string"},
        "reason": {"type": "string"},
        "replacedBy": _NULLABLE_STRING,
    },
    "required": ["id", "title", "retiredAt", "reason", "replacedBy"],
}

# With `ids`, one result lists what was found, what is retired and what never existed, in the asked order.
_ENTRIES: Final = {
    "type": "object",
    "properties": {
        "entries": {"type": "array", "items": _ENTRY},
        "gone": {"type": "array", "items": _TOMBSTONE},
        "missing": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"id": {"type": "string"}, "nearest": {"type": "array", "items": {"type": "string"}}},
                "required": ["id", "nearest"],
            },
        },
    },
    "required": ["entries", "gone", "missing"],
}

ENTRY_OUTPUT: Final = {"type": "object", "anyOf": [_ENTRY, _ENTRIES]}

_PACKED_ENTRY: Final = {
    "type": "object",
    "properties": {**_ENTRY_FIELDS, "score": {"type": "number"}, "relevance": {"type": "number"}},
    "required": [*_ENTRY_FIELDS, "score", "relevance"],
}

_CITATION: Final = {
    "type": "object",
    "properties": {
        "marker": {"type": "string"},
        "entryId": {"type": "string"},
        "url": {"type": "string"},
        "text": {"type": "string"},
        "confidence": {"type": "number"},
    },
    "required": ["marker", "entryId", "url", "text", "confidence"],
}

# Seed §4: the exact /api/context fields; additive fields (issue 3) are allowed, so no
# additionalProperties: false at the top level. `hint` only appears when action is needed.
CONTEXT_PACK_OUTPUT: Final = {
    "type": "object",
    "properties": {
        "query": {
            "type": "object",
            "properties": {"topic": {"type": "string"}, "budget": {"type": "integer"}, "category": _NULLABLE_STRING},
            "required": ["topic", "budget", "category"],
            "additionalProperties": False,
        },
        "knowledgeVersion": {"type": "string"},
        "revision": {"type": "string"},
        "usedTokens": {"type": "integer", "minimum": 0},
        "budget": {"type": "integer", "minimum": BUDGET_MIN, "maximum": BUDGET_MAX},
        "matched": {"type": "boolean"},
        "truncated": {"type": "boolean"},
        "entryCount": {"type": "integer", "minimum": 0},
        "minEntryTokens": {"type": ["integer", "null"]},
        "hint": _NULLABLE_STRING,
        "entries": {"type": "array", "items": _PACKED_ENTRY},
        "citations": {"type": "array", "items": _CITATION},
        "rules": {"type": "array", "items": {"type": "string"}},
        "generatedAt": {"type": "string"},
        "source": {"type": "string"},
    },
    "required": [
        "query",
        "knowledgeVersion",
        "revision",
        "usedTokens",
        "budget",
        "matched",
        "truncated",
        "entryCount",
        "entries",
        "citations",
        "rules",
        "generatedAt",
        "source",
    ],
}

PROMPT_PACK_OUTPUT: Final = {
    "type": "object",
    "properties": {"scenario": {"type": "string"}, "title": {"type": "string"}, "text": {"type": "string"}},
    "required": ["scenario", "title", "text"],
    "additionalProperties": False,
}

METRICS_OUTPUT: Final = {
    "type": "object",
    "properties": {"contextShape": {}, "budgetScan": {}},
}

FEEDBACK_OUTPUT: Final = {
    "type": "object",
    "properties": {"feedbackId": {"type": "string"}, "status": {"const": "queued_for_review"}},
    "required": ["feedbackId", "status"],
    "additionalProperties": False,
}


ANSWER_MAX_LENGTH: Final = 20_000

VERIFY_INPUT: Final = {
    "type": "object",
    "properties": {
        "answer": {
            "type": "string",
            "minLength": 1,
            "maxLength": ANSWER_MAX_LENGTH,
            "description": "The answer text with its [ID] citation markers.",
        },
        "release": {
            "type": ["string", "integer"],
            "description": "The releaseId or knowledgeVersion the answer was written from; default: the serving one.",
        },
        "pack": {"type": "string", "description": "The ETag of the context pack the answer was written from."},
    },
    "required": ["answer"],
    "additionalProperties": False,
}

_CITATION_PROBLEM: Final = {
    "type": "object",
    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
    "required": ["code", "message"],
}

VERIFY_OUTPUT: Final = {
    "type": "object",
    "properties": {
        "releaseId": {"type": "integer"},
        "knowledgeVersion": {"type": "string"},
        "citationCount": {"type": "integer", "minimum": 0},
        "validCount": {"type": "integer", "minimum": 0},
        "accuracy": {"type": ["number", "null"]},
        "problems": {"type": "object", "additionalProperties": {"type": "integer"}},
        "citations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "marker": {"type": "string"},
                    "valid": {"type": "boolean"},
                    "problems": {"type": "array", "items": _CITATION_PROBLEM},
                },
                "required": ["id", "marker", "valid", "problems"],
            },
        },
    },
    "required": ["releaseId", "knowledgeVersion", "citationCount", "validCount", "accuracy", "problems", "citations"],
}


def explain_input(categories: Sequence[str], id_prefix: str) -> dict[str, Any]:
    """``explain_context``: ``search_context``'s arguments and the IDs to explain."""
    schema = search_input(categories)
    ids = {"type": "string", "minLength": 1, "maxLength": ENTRY_ID_MAX_LENGTH}
    properties = {
        **schema["properties"],
        "ids": {
            "type": "array",
            "items": ids,
            "maxItems": ENTRY_IDS_MAX,
            "uniqueItems": True,
            "description": f"Entry IDs (such as {id_prefix}-202) to explain: why each is or is not in the pack.",
        },
    }
    return {**schema, "properties": properties}


EXPLAIN_OUTPUT: Final = {
    "type": "object",
    "properties": {
        "matched": {"type": "boolean"},
        "explain": {
            "type": "object",
            "properties": {
                "analysis": {"type": "object"},
                "matching": {"type": "object"},
                "candidates": {"type": "array", "items": {"type": "object"}},
                "entries": {"type": "array", "items": {"type": "object"}},
            },
            "required": ["analysis", "matching", "candidates", "entries"],
        },
    },
    "required": ["matched", "explain"],
}
