"""A shape is an ordered list of fields, each with its JSON Schema and how to read its value.

The JSON an agent receives and the JSON Schema that describes it come from the same list, so they
cannot drift apart. Schemas use only keywords that mean the same in draft-07 (the served schema,
seed §10), 2020-12 (MCP) and, after ``nullable`` conversion, OpenAPI 3.0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class Field(Generic[S]):
    """One member of a JSON object. ``optional`` members are left out when their value is None."""

    name: str
    schema: Mapping[str, Any]
    value: Callable[[S], Any]
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Shape(Generic[S]):
    """A JSON object built from a source record. ``closed`` objects forbid members not listed."""

    title: str
    fields: tuple[Field[S], ...]
    description: str = ""
    closed: bool = False

    def json(self, source: S) -> dict[str, Any]:
        """The object in field order (orjson keeps it, so equal sources give equal bytes)."""
        document: dict[str, Any] = {}
        for field in self.fields:
            value = field.value(source)
            if value is None and field.optional:
                continue
            document[field.name] = value
        return document

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "title": self.title}
        if self.description:
            schema["description"] = self.description
        schema["properties"] = {field.name: dict(field.schema) for field in self.fields}
        schema["required"] = [field.name for field in self.fields if not field.optional]
        if self.closed:
            schema["additionalProperties"] = False
        return schema

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(field.name for field in self.fields)


# Reusable property schemas.
STRING: Mapping[str, Any] = {"type": "string"}
INTEGER: Mapping[str, Any] = {"type": "integer"}
NUMBER: Mapping[str, Any] = {"type": "number"}
BOOLEAN: Mapping[str, Any] = {"type": "boolean"}
ID_PATTERN = "^[A-Z][A-Z0-9]{0,15}-\\d{3,9}$"
ID: Mapping[str, Any] = {"type": "string", "pattern": ID_PATTERN, "examples": ["EG-202"]}
DATE: Mapping[str, Any] = {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"}
DATE_TIME: Mapping[str, Any] = {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$"}
SHA256: Mapping[str, Any] = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
URI: Mapping[str, Any] = {"type": "string", "format": "uri"}


def described(schema: Mapping[str, Any], description: str) -> dict[str, Any]:
    return {**schema, "description": description}


def nullable(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``type: [T, "null"]``: valid in draft-07 and 2020-12; OpenAPI 3.0 gets ``nullable`` instead."""
    return {**schema, "type": [schema["type"], "null"]}


def array(items: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "array", "items": dict(items), **extra}


def is_clean_text(text: str) -> bool:
    """Encodable as UTF-8 (no lone surrogate) and storable in PostgreSQL text and jsonb (no NUL): the text
    every agent-facing body may carry (MCP and A2A through mcp_bridge.jsonrpc, /api/verify)."""
    if text.isascii():
        return "\x00" not in text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


def holds_unclean_text(value: Any) -> bool:
    """Whether a JSON value holds a string (a value or an object's key, at any depth) is_clean_text refuses."""
    if isinstance(value, str):
        return not is_clean_text(value)
    if isinstance(value, dict):
        return any(not is_clean_text(key) or holds_unclean_text(item) for key, item in value.items())
    if isinstance(value, list):
        return any(holds_unclean_text(item) for item in value)
    return False
