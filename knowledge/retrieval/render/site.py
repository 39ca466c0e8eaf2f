"""site.json: the parts of a snapshot that context.json leaves out, so a served release rebuilds its Snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace
from typing import Any

import orjson

from knowledge.retrieval.contract.records import PUBLIC, Tombstone
from knowledge.retrieval.contract.shapes import ENTRY, TOMBSTONE, Served
from knowledge.retrieval.snapshot import (
    CategoryInfo,
    DocRecord,
    EntryRecord,
    NamespaceInfo,
    RankingSettings,
    ReleaseStamp,
    Snapshot,
    ThemeRecord,
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
        "themes": [_theme_dict(t) for t in snapshot.themes],
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
        approved_at=data.get("approvedAt"),
        review_state=data.get("reviewState", "unrecorded"),
        sensitivity=data.get("sensitivity", "public"),
        review_by=data.get("reviewBy"),
        valid_until=data.get("validUntil"),
        paths=tuple(data.get("paths", ())),
        layer=data.get("layer"),
        overrides=data.get("overrides"),
    )


def _theme_dict(theme: ThemeRecord) -> dict[str, Any]:
    """A theme as site.json holds it; `layer` only for a base's theme (own themes read as before)."""
    data = asdict(theme)
    if not theme.layer:
        del data["layer"]
    return data


def _theme(data: dict[str, Any]) -> ThemeRecord:
    return ThemeRecord(
        slug=data["slug"],
        title=data["title"],
        summary=data["summary"],
        entries=tuple(data["entries"]),
        layer=data.get("layer", ""),
    )


def _tombstone(data: dict[str, Any]) -> Tombstone:
    return Tombstone(
        id=data["id"],
        title=data["title"],
        retired_at=data["retiredAt"],
        reason=data["reason"],
        replaced_by=data["replacedBy"],
        sensitivity=data.get("sensitivity", "public"),
    )


def snapshot_from_artifacts(*, site_json: bytes, context_json: bytes) -> tuple[Snapshot, ReleaseStamp]:
    """The Snapshot and ReleaseStamp a release was rendered from, read back from two of its artifacts."""
    site = orjson.loads(site_json)
    context = orjson.loads(context_json)
    entries = tuple(_entry(e, site.get("aliases", {})) for e in context["entries"])
    return snapshot_from_site(site, entries, tuple(_tombstone(t) for t in context.get("retired", ())))


def snapshot_from_site(
    site: dict[str, Any], entries: Sequence[EntryRecord], tombstones: tuple[Tombstone, ...]
) -> tuple[Snapshot, ReleaseStamp]:
    """The Snapshot and ReleaseStamp of parsed site.json with the release's entries and tombstones."""
    snapshot = Snapshot(
        namespace=_namespace(site["namespace"]),
        entries=entries,
        tombstones=tombstones,
        docs=tuple(DocRecord(**d) for d in site["docs"]),
        prompt_packs=tuple((str(s), str(t)) for s, t in site["promptPacks"]),
        ranking=RankingSettings(**site["ranking"]),
        synonyms=tuple(SynonymSet(phrases=tuple(s["phrases"]), two_way=s["two_way"]) for s in site.get("synonyms", ())),
        themes=tuple(_theme(t) for t in site.get("themes", ())),
    )
    return snapshot, ReleaseStamp(**site["stamp"])


def render_protected_json(snapshot: Snapshot, stamp: ReleaseStamp) -> bytes:
    """protected.json (internal, never served): what the public artifacts leave out, so a served release
    rebuilds the full snapshot for cleared callers: the non-public entries and tombstones, the order of
    all of them, and the links of public entries that point at hidden ones."""
    ns = snapshot.namespace
    public_ids = {e.id for e in snapshot.entries if e.sensitivity == PUBLIC}
    document = {
        "order": [e.id for e in snapshot.entries],
        "entries": [
            {**ENTRY.json(Served(e, ns, stamp)), "aliases": list(e.aliases)}
            for e in snapshot.entries
            if e.sensitivity != PUBLIC
        ],
        "publicLinks": {
            e.id: list(e.links)
            for e in snapshot.entries
            if e.sensitivity == PUBLIC and any(link not in public_ids for link in e.links)
        },
        "retiredOrder": [t.id for t in snapshot.tombstones],
        "retired": [
            {**TOMBSTONE.json(t), "sensitivity": t.sensitivity} for t in snapshot.tombstones if t.sensitivity != PUBLIC
        ],
    }
    return orjson.dumps(document)


def snapshot_complete(public: Snapshot, protected_json: bytes) -> Snapshot:
    """The full snapshot of a release from its public snapshot and its protected.json."""
    document = orjson.loads(protected_json)
    hidden = {e["id"]: _entry(e, {e["id"]: e.get("aliases", [])}) for e in document["entries"]}
    links = document.get("publicLinks", {})
    shown = {e.id: replace(e, links=tuple(links[e.id])) if e.id in links else e for e in public.entries}
    stones = {t.id: t for t in public.tombstones} | {t["id"]: _tombstone(t) for t in document["retired"]}
    return replace(
        public,
        entries=tuple(shown.get(i) or hidden[i] for i in document["order"]),
        tombstones=tuple(stones[i] for i in document["retiredOrder"]),
    )
