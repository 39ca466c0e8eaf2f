"""A release's manifest and metrics are encoded with orjson (CompiledJSONEncoder), as json.dumps would."""

from __future__ import annotations

import json

from knowledge.models.json_encoder import CompiledJSONEncoder


def test_it_encodes_what_json_dumps_encodes_keys_that_are_not_strings_included() -> None:
    value = {"entries": [{"id": "EG-202", "version": 3, "confidence": 0.85, "hash": None}], 7: ["中文", True]}
    encoded = json.dumps(value, cls=CompiledJSONEncoder)
    assert json.loads(encoded) == json.loads(json.dumps(value))
    assert json.loads(encoded)["7"] == ["中文", True]
