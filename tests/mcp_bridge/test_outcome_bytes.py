"""transport.outcome_bytes: a search's pack embedded as the bytes /api/context sent is the text dumps writes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcp_bridge.backend import RenderedPack
from mcp_bridge.jsonrpc import Outcome, dumps, result_body
from mcp_bridge.transport import _rendered_pack, outcome_bytes

PACKS = [
    {"topic": "token 预算", "score": 12.345, "relevance": 0.01, "text": 'quote " back\\slash \n\t\x1f\x7f\u2028 é'},
    {"entries": [{"confidence": 0.00001, "score": 0.0}], "note": "re-run 1e-05"},  # written apart: encoded again
    {"entries": [{"confidence": 1.5e-7}], "big": 1e16, "neg": -0.0},
    {"nested": {"list": [1, 2.5, None, True, "x"]}, "empty": {}, "none": []},
]


@pytest.mark.parametrize("pack", PACKS)
def test_an_embedded_pack_reads_exactly_as_the_pack_encoded_again(pack: dict[str, Any]) -> None:
    result = {"content": [{"type": "text", "text": "the pack as text \x00 aside"}], "structuredContent": pack}
    rendered = RenderedPack(pack, orjson.dumps(pack))
    embedded = Outcome(200, result_body(7, {**result, "structuredContent": rendered}))
    assert outcome_bytes(embedded) == dumps(result_body(7, result)).encode()


def test_a_pack_whose_numbers_json_dumps_writes_alike_is_embedded_and_others_are_encoded_again() -> None:
    def embedded(pack: dict[str, Any]) -> bool:
        body = result_body(1, {"structuredContent": RenderedPack(pack, orjson.dumps(pack))})
        return _rendered_pack(body) is not None

    assert embedded({"text": "re-run the e-mail 2e-", "score": 0.0001, "relevance": 10.5})
    assert not embedded({"confidence": 0.00001})
    assert not embedded({"confidence": 1.5e-7})
