"""The engine's view of one published entry."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import orjson


@dataclass(frozen=True, slots=True)
class Document:
    """One published entry as the index sees it; `tokens` is its seed §4 loading cost."""

    id: str
    category: str
    title: str
    summary: str
    body: str
    tags: tuple[str, ...]
    confidence: float
    tokens: int
    links: tuple[str, ...] = ()
    # Alternate titles (also in another language): matched like the title, never shown to agents.
    aliases: tuple[str, ...] = ()


def document_key(document: Document) -> bytes:
    """A digest of everything the engine can read from a document (so any change analyses it again)."""
    return hashlib.blake2b(orjson.dumps(document), digest_size=16).digest()
