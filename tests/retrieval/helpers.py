"""Document builders and the demo namespace for the engine's pure tests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from knowledge.retrieval.documents import Document
from knowledge.retrieval.snapshot import CategoryInfo, EntryRecord, NamespaceInfo
from knowledge.retrieval.tokens import entry_tokens

DEMO_ENTRIES = Path(__file__).resolve().parents[2] / "knowledge" / "demo" / "entries.jsonl"


def make_document(
    id: str,
    title: str = "",
    *,
    category: str = "fact",
    summary: str = "",
    body: str = "",
    tags: Iterable[str] = (),
    confidence: float = 1.0,
    links: Iterable[str] = (),
    aliases: Iterable[str] = (),
) -> Document:
    return Document(
        id=id,
        category=category,
        title=title,
        summary=summary,
        body=body,
        tags=tuple(tags),
        confidence=confidence,
        tokens=entry_tokens(title=title, summary=summary, body=body),
        links=tuple(links),
        aliases=tuple(aliases),
    )


@cache
def demo_documents() -> tuple[Document, ...]:
    """The 15 entries of the demo namespace, sorted by ID as a release hands them over."""
    rows = [json.loads(line) for line in DEMO_ENTRIES.read_text(encoding="utf-8").splitlines()]
    documents = [
        make_document(
            row["id"],
            row["title"],
            category=row["category"],
            summary=row["summary"],
            body=row["body"],
            tags=row["tags"],
            confidence=row["confidence"],
            links=row.get("links", ()),
            aliases=row.get("aliases", ()),
        )
        for row in rows
    ]
    return tuple(sorted(documents, key=lambda d: d.id))


def demo_record(row: dict[str, Any]) -> EntryRecord:
    """One line of the demo's entries.jsonl as a published entry record (version 1)."""
    return EntryRecord(
        id=row["id"],
        category=row["category"],
        title=row["title"],
        summary=row["summary"],
        body=row["body"],
        tags=tuple(row["tags"]),
        confidence=row["confidence"],
        tokens=entry_tokens(title=row["title"], summary=row["summary"], body=row["body"]),
        updated=row["updated"],
        version=1,
        content_hash="0" * 64,
        links=tuple(row.get("links", ())),
    )


@cache
def demo_records() -> tuple[EntryRecord, ...]:
    """The 15 demo entries in ID order."""
    rows = [json.loads(line) for line in DEMO_ENTRIES.read_text(encoding="utf-8").splitlines()]
    return tuple(sorted((demo_record(row) for row in rows), key=lambda e: e.id))


DEMO_CATEGORIES = ("fact", "protocol", "rule", "principle", "workflow")


def demo_namespace(*, language: str = "zh-CN", rules: tuple[str, ...] = ("rule one", "rule two")) -> NamespaceInfo:
    """The demo namespace's public metadata, trimmed to what the renderers read."""
    return NamespaceInfo(
        slug="evergreen",
        name="Evergreen",
        prefix="EG",
        title="Evergreen",
        summary="s",
        contact="c",
        license="CC-BY-4.0",
        base_url="https://evergreen.example.com",
        language=language,
        is_public=True,
        default_budget=2000,
        rules=rules,
        categories=tuple(CategoryInfo(slug, slug, "") for slug in DEMO_CATEGORIES),
    )
