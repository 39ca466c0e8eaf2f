"""site.json: the parts of a snapshot that context.json leaves out, so a served release rebuilds its Snapshot."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import orjson

from knowledge.retrieval.contract.records import Tombstone
from knowledge.retrieval.snapshot import (
    CategoryInfo,
    DocRecord,
    EntryRecord,
    NamespaceInfo,
    RankingSettings,
    ReleaseStamp,
    Snapshot,
)
from knowledge.retrieval.synonyms import SynonymSet


def render_site_json(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    document = {
        "namespace": asdict(snapshot.namespace),
        "docs": [asdict(doc) for doc in snapshot.docs],
        "promptPacks": [list(pack) for pack in snapshot.prompt_packs],
        "ranking": asdict(snapshot.ranking),
        "stamp": asdict(stamp),
        # Search-only content that agents do not receive (context.json leaves it out).
        "aliases": {e.id: list(e.aliases) for e in snapshot.entries if e.aliases},
        "synonyms": [asdict(s) for s in snapshot.synonyms],
    }
    return orjson.dumps(document)


def _namespace(data: dict[str, Any]) -> NamespaceInfo:
    return NamespaceInfo(
        **{
            **data,
            "rules": tuple(data["rules"]),
            "categories": tuple(CategoryInfo(**c) for c in data["categories"]),
            "faq": tuple((str(q), str(a)) for q, a in data.get("faq", ())),
        }
    )


def _entry(data: dict[str, Any], aliases: dict[str, list[str]]) -> EntryRecord:
    return EntryRecord(
        id=data["id"],
        category=data["category"],
        title=data["title"],
        summary=data["summary"],
        body=data["body"],
        tags=tuple(data["tags"]),
        confidence=data["confidence"],
        tokens=data["tokens"],
        updated=data["updated"],
        version=data["version"],
        content_hash=data["contentHash"],
        links=tuple(data.get("links", ())),
        aliases=tuple(aliases.get(data["id"], ())),
    )


def _tombstone(data: dict[str, Any]) -> Tombstone:
    return Tombstone(
        id=data["id"],
        title=data["title"],
        retired_at=data["retiredAt"],
        reason=data["reason"],
        replaced_by=data["replacedBy"],
    )


def snapshot_from_artifacts(*, site_json: bytes, context_json: bytes) -> tuple[Snapshot, ReleaseStamp]:
    """The Snapshot and ReleaseStamp a release was rendered from, read back from two of its artifacts."""
    site = orjson.loads(site_json)
    context = orjson.loads(context_json)
    snapshot = Snapshot(
        namespace=_namespace(site["namespace"]),
        entries=tuple(_entry(e, site.get("aliases", {})) for e in context["entries"]),
        tombstones=tuple(_tombstone(t) for t in context.get("retired", ())),
        docs=tuple(DocRecord(**d) for d in site["docs"]),
        prompt_packs=tuple((str(s), str(t)) for s, t in site["promptPacks"]),
        ranking=RankingSettings(**site["ranking"]),
        synonyms=tuple(SynonymSet(phrases=tuple(s["phrases"]), two_way=s["two_way"]) for s in site.get("synonyms", ())),
    )
    return snapshot, ReleaseStamp(**site["stamp"])
