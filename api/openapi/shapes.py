"""JSON Schema (2020-12, OpenAPI 3.1's dialect) of the responses, shared by the operations (seed §4 and §6 shapes)."""

from __future__ import annotations

from typing import Any

from knowledge.retrieval.contract import shapes as contract

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
NUMBER: dict[str, Any] = {"type": "number"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
ID: dict[str, Any] = {"type": "string", "pattern": "^[A-Z][A-Z0-9]{0,15}-\\d{3,9}$", "examples": ["EG-202"]}


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties), **extra}


# The agent contract's shapes (knowledge.retrieval.contract.shapes), so REST documents exactly what it serves;
# OpenAPI 3.1 schemas are JSON Schema 2020-12, the contract's own dialect, so they are used as they are.
ERROR = obj(
    {"error": contract.ERROR.schema()},
    description="Every 4xx body: a stable code, a human message and the offending parameter.",
)
CONTEXT = contract.CONTEXT.schema()
ENTRY = contract.SERVED_ENTRY.schema()
TOMBSTONE = contract.TOMBSTONE.schema()
MISSING = contract.MISSING.schema()

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
        "evaluation": {"type": ["object", "null"]},
        "accuracyDefinition": STRING,
        "tokenSavingDefinition": STRING,
        "roundsDefinition": STRING,
        "definitions": {"type": "object", "additionalProperties": STRING},
    },
    required=["evaluation", "accuracyDefinition", "tokenSavingDefinition", "roundsDefinition", "definitions"],
)

NULLABLE_INTEGER: dict[str, Any] = {"type": ["integer", "null"]}
NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}

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
        "accuracy": {"type": ["number", "null"]},
        "problems": {"type": "object", "additionalProperties": INTEGER},
        "citations": {"type": "array", "items": CITATION_CHECKED},
    }
)
