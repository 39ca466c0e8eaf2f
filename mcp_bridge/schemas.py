"""JSON Schemas (2020-12, MCP's default dialect) of the tools' arguments and structured results."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from knowledge.retrieval.contract.shapes import (
    BUDGET_MODES,
    CONTEXT,
    LIMIT_MAX,
    LIMIT_MIN,
    PATH_MAX_LENGTH,
    PATHS_MAX,
    SERVED_ENTRY,
    TOMBSTONE,
)

BUDGET_DEFAULT: Final = 2000
BUDGET_MIN: Final = 200
BUDGET_MAX: Final = 8000
QUERY_MAX_LENGTH: Final = 500
ENTRY_ID_MAX_LENGTH: Final = 64
# get_entry fetches up to this many IDs at once: a search's `omitted` (or `overLimit`) list holds at most 20.
ENTRY_IDS_MAX: Final = 20
FEEDBACK_MESSAGE_MAX_LENGTH: Final = 2000
SCENARIOS: Final = ("chat", "coding", "research", "support")
FEEDBACK_KINDS: Final = ("outdated", "incorrect", "missing", "other")


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
            "budgetMode": {
                "type": "string",
                "enum": list(BUDGET_MODES),
                "default": "entries",
                "description": "entries: budget bounds the entries' tokens; payload: the whole response fits it.",
            },
            "paths": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": PATH_MAX_LENGTH},
                "maxItems": PATHS_MAX,
                "description": "The files you work on, relative to the project root (src/api/users.py). Entries "
                "whose path globs match come first; entries for other files are left out.",
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

# The result shapes are the agent contract's (REST answers the same JSON).
_ENTRIES: Final = {
    "type": "object",
    "properties": {
        "entries": {"type": "array", "items": SERVED_ENTRY.schema()},
        "gone": {"type": "array", "items": TOMBSTONE.schema()},
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

# With `ids`, one result lists what was found, what is retired and what never existed, in the asked order.
ENTRY_OUTPUT: Final = {"type": "object", "anyOf": [SERVED_ENTRY.schema(), _ENTRIES]}

CONTEXT_PACK_OUTPUT: Final = CONTEXT.schema()

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
    searched = {name: value for name, value in schema["properties"].items() if name not in ("budgetMode", "paths")}
    properties = {
        **searched,
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
