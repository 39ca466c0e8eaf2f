"""/context.json: the whole knowledge base in the contract's shape, valid against /schemas/knowledge.schema.json."""

from __future__ import annotations

import orjson

from knowledge.retrieval.contract.shapes import KNOWLEDGE, Knowledge
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot


def render_context_json(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    return orjson.dumps(KNOWLEDGE.json(Knowledge(snapshot, stamp)))
