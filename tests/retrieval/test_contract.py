"""The agent contract's shapes: each one's JSON validates against its own schema, in every dialect it is served in."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from api.openapi import shapes as openapi_shapes
from knowledge.retrieval.contract import shapes
from knowledge.retrieval.contract.fields import Field, Shape
from knowledge.retrieval.contract.lookups import entry_gone, entry_missing
from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.payload import ContextQuery, ReleaseView, context_build
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from tests.retrieval.helpers import demo_namespace, demo_records

STAMP = ReleaseStamp(sequence=7, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")
STONE = Tombstone("EG-009", "Old", "2026-08-01T09:00:00Z", "merged", "EG-101")


def _validate(schema: dict[str, Any], document: Any) -> None:
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.Draft7Validator(schema).validate(document)
    jsonschema.Draft202012Validator(schema).validate(document)


def test_a_pack_validates_against_the_context_schema() -> None:
    records = demo_records()
    view = ReleaseView(release_id=7, namespace=demo_namespace(), stamp=STAMP, entries=records)
    index = SearchIndex.compile([r.as_document() for r in records])
    body = context_build(index=index, view=view, query=ContextQuery(topic="token", budget=800, category=None))
    _validate(shapes.CONTEXT.schema(), body)
    assert list(body) == [name for name in shapes.CONTEXT.names if name in body]  # the shape's order
    assert "overLimit" not in body  # optional: only a pack asked with a limit has it


def test_an_entry_a_tombstone_and_a_missing_id_validate_against_their_schemas() -> None:
    ns = demo_namespace()
    served = shapes.Served(demo_records()[0], ns, STAMP)
    _validate(shapes.SERVED_ENTRY.schema(), shapes.SERVED_ENTRY.json(served))
    _validate(shapes.TOMBSTONE.schema(), entry_gone(STONE, namespace=ns).payload)
    _validate(shapes.MISSING.schema(), entry_missing("EG-999", ("EG-001",), namespace=ns).payload)


def test_context_json_validates_against_the_served_schema() -> None:
    snapshot = Snapshot(namespace=demo_namespace(), entries=demo_records(), tombstones=(STONE,))
    _validate(shapes.knowledge_schema(), shapes.KNOWLEDGE.json(shapes.Knowledge(snapshot, STAMP)))


def test_a_closed_shape_refuses_unknown_members_and_optional_fields_are_left_out() -> None:
    shape: Shape[dict[str, Any]] = Shape(
        "T",
        (
            Field("a", {"type": "string"}, lambda s: s["a"]),
            Field("b", {"type": "string"}, lambda s: s.get("b"), optional=True),
        ),
        closed=True,
    )
    assert shape.json({"a": "x"}) == {"a": "x"}
    assert shape.schema()["required"] == ["a"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(shape.schema()).validate({"a": "x", "c": 1})


def test_openapi_3_1_documents_the_contract_schemas_as_they_are() -> None:
    # OpenAPI 3.1's schemas are JSON Schema 2020-12, the contract's dialect: no translation, no drift.
    assert shapes.CONTEXT.schema() == openapi_shapes.CONTEXT
    assert shapes.SERVED_ENTRY.schema() == openapi_shapes.ENTRY
    assert openapi_shapes.CONTEXT["properties"]["hint"]["type"] == ["string", "null"]
