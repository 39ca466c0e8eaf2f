"""JSON Schema fragments of the responses, shared by the OpenAPI operations (seed §4 and §6 shapes)."""

from __future__ import annotations

from typing import Any

STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
NUMBER: dict[str, Any] = {"type": "number"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
ID: dict[str, Any] = {"type": "string", "pattern": "^[A-Z][A-Z0-9]{0,15}-\\d{3,9}$", "example": "EG-202"}


def obj(properties: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties), **extra}


ERROR = obj(
    {
        "error": obj(
            {
                "code": {**STRING, "example": "invalid_budget"},
                "message": STRING,
                "param": {"type": "string", "nullable": True, "example": "budget"},
            }
        )
    },
    description="Every 4xx body: a stable code, a human message and the offending parameter.",
)

PACKED_ENTRY = obj(
    {
        "id": ID,
        "category": STRING,
        "title": STRING,
        "summary": STRING,
        "body": STRING,
        "tags": {"type": "array", "items": STRING},
        "confidence": {**NUMBER, "minimum": 0, "maximum": 1},
        "tokens": {**INTEGER, "description": "Seed §4 estimate of title + summary + body."},
        "updated": {**STRING, "format": "date"},
        "score": {**NUMBER, "description": "Ranking score; only for ordering, not comparable across queries."},
        "relevance": {**NUMBER, "description": "round(score / top score, 2), in (0, 1]; not evidence of relevance."},
        "version": {**INTEGER, "description": "Additive: the published version number."},
        "contentHash": {**STRING, "description": "Additive: SHA-256 of the version's content."},
        "stale": {**BOOLEAN, "description": "Additive: updated more than 12 months before the release (EG-201.4)."},
        "url": {**STRING, "format": "uri", "description": "Additive: /api/entries/<ID> of this entry."},
        "via": {**ID, "description": "Additive, only with link expansion: the hit that linked this entry in."},
    },
    required=[
        "id",
        "category",
        "title",
        "summary",
        "body",
        "tags",
        "confidence",
        "tokens",
        "updated",
        "score",
        "relevance",
        "version",
        "contentHash",
        "stale",
        "url",
    ],
)

CITATION = obj(
    {"marker": {**STRING, "example": "[EG-202]"}, "entryId": ID, "url": STRING, "text": STRING, "confidence": NUMBER}
)

CONTEXT = obj(
    {
        "query": obj(
            {"topic": STRING, "budget": INTEGER, "category": {"type": "string", "nullable": True}},
            additionalProperties=False,
        ),
        "knowledgeVersion": STRING,
        "revision": {**STRING, "format": "date"},
        "usedTokens": {**INTEGER, "description": "Tokens of the packed entries; always <= budget."},
        "budget": {**INTEGER, "description": "The budget after clamping to [200, 8000]."},
        "matched": {**BOOLEAN, "description": "false: zero hit, the entries are a fallback and must not be cited."},
        "truncated": {**BOOLEAN, "description": "A matching entry was left out for budget."},
        "entryCount": INTEGER,
        "minEntryTokens": {"type": "integer", "nullable": True, "description": "Cost of the cheapest hit."},
        "hint": {"type": "string", "nullable": True, "description": "What to do next, in the namespace's language."},
        "entries": {"type": "array", "items": PACKED_ENTRY},
        "citations": {"type": "array", "items": CITATION},
        "rules": {"type": "array", "items": STRING},
        "generatedAt": {**STRING, "description": "The release's build time (never the request time)."},
        "source": {**STRING, "enum": ["api/context"]},
        "releaseId": {**INTEGER, "description": "Additive: the release sequence the pack comes from."},
        "hitCount": {**INTEGER, "description": "Additive: how many entries matched before packing."},
        "omitted": {
            "type": "array",
            "items": obj({"id": ID, "tokens": INTEGER}),
            "description": "Additive: up to 20 matching entries left out for budget, with their token cost.",
        },
    }
)

ENTRY = obj(
    {
        "id": ID,
        "category": STRING,
        "title": STRING,
        "summary": STRING,
        "body": STRING,
        "tags": {"type": "array", "items": STRING},
        "confidence": NUMBER,
        "tokens": INTEGER,
        "updated": STRING,
        "version": INTEGER,
        "contentHash": STRING,
        "links": {"type": "array", "items": ID},
        "url": STRING,
        "stale": BOOLEAN,
        "citation": CITATION,
        "knowledgeVersion": STRING,
        "releaseId": INTEGER,
    }
)

TOMBSTONE = obj(
    {
        "id": ID,
        "title": STRING,
        "retiredAt": {**STRING, "format": "date-time"},
        "reason": STRING,
        "replacedBy": {**ID, "nullable": True},
    },
    description="410 Gone: the entry was retired; its ID is never reused.",
)

MISSING = obj(
    {"error": ERROR["properties"]["error"], "nearest": {"type": "array", "items": ID, "maxItems": 3}},
    description="404: no such ID here (IDs of other namespaces answer alike), with the three nearest IDs.",
)

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
