"""JSON Schema fragments of the responses, shared by the OpenAPI operations (seed §4 and §6 shapes)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from knowledge.retrieval.contract import shapes as contract

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
NUMBER: dict[str, Any] = {"type": "number"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
ID: dict[str, Any] = {"type": "string", "pattern": "^[A-Z][A-Z0-9]{0,15}-\\d{3,9}$", "example": "EG-202"}


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties), **extra}


def openapi(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A contract schema in OpenAPI 3.0's dialect: ``type: [T, "null"]`` becomes ``nullable``,
    ``examples`` becomes ``example`` and ``title`` (a component name there) is dropped."""
    converted: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key == "type" and isinstance(value, list):
            kinds = [kind for kind in value if kind != "null"]
            converted["type"] = kinds[0]
            converted["nullable"] = True
        elif key == "examples":
            converted["example"] = value[0]
        elif key == "properties":
            converted[key] = {name: openapi(child) for name, child in value.items()}
        elif key == "items" or (key == "additionalProperties" and isinstance(value, dict)):
            converted[key] = openapi(value)
        elif key in ("anyOf", "oneOf"):
            converted[key] = [openapi(child) for child in value]
        else:
            converted[key] = value
    return converted


# The agent contract's shapes (knowledge.retrieval.contract.shapes), so REST documents exactly what it serves.
ERROR = obj(
    {"error": openapi(contract.ERROR.schema())},
    description="Every 4xx body: a stable code, a human message and the offending parameter.",
)
CONTEXT = openapi(contract.CONTEXT.schema())
ENTRY = openapi(contract.SERVED_ENTRY.schema())
TOMBSTONE = openapi(contract.TOMBSTONE.schema())
MISSING = openapi(contract.MISSING.schema())

METRICS = obj(
    {
        "contextShape": {
            "type": "array",
            "items": obj({"source": STRING, "path": STRING, "tokens": INTEGER, "bytes": INTEGER}),
        },
        "budgetScan": {
            "type": "array",
            "items": obj({"budget": INTEGER, "entryCount": INTEGER, "usedTokens": INTEGER, "truncated": BOOLEAN}),
        },
        "evaluation": {"type": "object", "nullable": True},
    },
    required=["evaluation"],
)

NULLABLE_INTEGER: dict[str, Any] = {"type": "integer", "nullable": True}
NULLABLE_STRING: dict[str, Any] = {"type": "string", "nullable": True}

CHANGE = obj(
    {
        "id": ID,
        "change": {**STRING, "enum": ["added", "changed", "retired", "restored", "removed"]},
        "version": {**NULLABLE_INTEGER, "description": "Now; null when retired or removed."},
        "contentHash": NULLABLE_STRING,
        "previousVersion": {**NULLABLE_INTEGER, "description": "In the `since` release; null when not served then."},
        "previousContentHash": NULLABLE_STRING,
    }
)

CHANGES = obj(
    {
        "namespace": STRING,
        "since": obj({"reference": STRING, "releaseId": NULLABLE_INTEGER, "knowledgeVersion": NULLABLE_STRING}),
        "releaseId": INTEGER,
        "knowledgeVersion": STRING,
        "generatedAt": STRING,
        "changeCount": {**INTEGER, "description": "All changes, over every page."},
        "counts": obj(dict.fromkeys(("added", "changed", "retired", "restored", "removed"), INTEGER)),
        "changes": {"type": "array", "items": CHANGE},
        "next": {**NULLABLE_STRING, "description": "The URL of the next page; null on the last."},
    }
)

VERIFY_REQUEST = obj(
    {
        "answer": {**STRING, "maxLength": 20000, "description": "The answer with its [ID] citation markers."},
        "release": {
            "oneOf": [INTEGER, STRING],
            "description": "releaseId (integer) or knowledgeVersion the answer was written from.",
        },
        "pack": {**STRING, "description": "The ETag of the /api/context pack the answer was written from."},
    },
    required=["answer"],
)

CITATION_CHECKED = obj(
    {
        "marker": STRING,
        "id": ID,
        "start": INTEGER,
        "end": INTEGER,
        "sentence": STRING,
        "valid": BOOLEAN,
        "problems": {
            "type": "array",
            "items": obj(
                {
                    "code": {
                        **STRING,
                        "enum": ["not_in_release", "not_in_pack", "retired", "figures_not_verbatim"],
                    },
                    "message": STRING,
                },
            ),
        },
    }
)

VERIFY = obj(
    {
        "namespace": STRING,
        "releaseId": INTEGER,
        "knowledgeVersion": STRING,
        "pack": NULLABLE_STRING,
        "servingReleaseId": INTEGER,
        "citationCount": INTEGER,
        "validCount": INTEGER,
        "accuracy": {"type": "number", "nullable": True},
        "problems": {"type": "object", "additionalProperties": INTEGER},
        "citations": {"type": "array", "items": CITATION_CHECKED},
    }
)
