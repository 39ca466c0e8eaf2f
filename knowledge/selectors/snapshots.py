"""Read a namespace's publishable state into a Snapshot for the release builder."""

from __future__ import annotations

from datetime import date

from django.db.models import TextField
from django.db.models.functions import Cast
from django.utils import timezone

from knowledge.models import (
    DocPage,
    Entry,
    EntryVersion,
    Namespace,
    PromptPack,
    ReviewedText,
    SynonymSet,
    TextKind,
)
from knowledge.retrieval.contract.records import REVIEWED, SELF_APPROVED, UNRECORDED, Tombstone
from knowledge.retrieval.layers import layers_compose, layers_withdrawn
from knowledge.retrieval.snapshot import (
    CategoryInfo,
    DocRecord,
    EntryRecord,
    NamespaceInfo,
    RankingSettings,
    Snapshot,
    ThemeRecord,
    without_dead_links,
)
from knowledge.retrieval.synonyms import SynonymSet as SynonymRule
from knowledge.retrieval.tiers import expired
from knowledge.retrieval.timestamps import rfc3339
from knowledge.selectors.layers import layer_slugs, layers_read, withdrawn_list


def namespace_info(*, namespace: Namespace) -> NamespaceInfo:
    categories = tuple(
        CategoryInfo(slug=c.slug, name=c.name, purpose=c.purpose)
        for c in namespace.categories.order_by("position", "slug")
    )
    faq = tuple((str(item.get("question", "")), str(item.get("answer", ""))) for item in namespace.faq or [])
    return NamespaceInfo(
        slug=namespace.slug,
        name=namespace.name,
        prefix=namespace.prefix,
        title=namespace.title,
        summary=namespace.summary,
        contact=namespace.contact,
        license=namespace.license,
        base_url=namespace.base_url,
        language=namespace.language,
        is_public=namespace.is_public,
        default_budget=namespace.default_budget,
        rules=tuple(namespace.rules or ()),
        categories=categories,
        faq=faq,
    )


def entry_record(*, entry: Entry, version: EntryVersion) -> EntryRecord:
    """A version of an entry as agents see it (the live one in a release, any one in a preview)."""
    return _record(public_id=entry.public_id, category=entry.category.slug, version=version)


def _record(*, public_id: str, category: str, version: EntryVersion) -> EntryRecord:
    return EntryRecord(
        id=public_id,
        category=category,
        title=version.title,
        summary=version.summary,
        body=version.body,
        tags=tuple(version.tags),
        confidence=float(version.confidence),
        tokens=version.tokens,
        updated=version.updated.isoformat(),
        version=version.number,
        content_hash=version.content_hash,
        links=tuple(version.links),
        aliases=tuple(version.aliases),
        approved_at=rfc3339(version.reviewed_at) if version.reviewed_at else None,
        review_state=_review_state(version),
        sensitivity=version.sensitivity,
        review_by=version.review_by.isoformat() if version.review_by else None,
        valid_until=version.valid_until.isoformat() if version.valid_until else None,
        paths=tuple(version.paths),
        overrides=version.overrides or None,
    )


def _review_state(version: EntryVersion) -> str:
    """Four eyes, the author's own approval, or an approval from before reviewers were recorded."""
    if version.reviewer_id is None:
        return UNRECORDED
    return SELF_APPROVED if version.reviewer_id == version.author_id else REVIEWED


RecordKey = tuple[int, str, str, str]  # live version id, its modified_at (as the database writes it), ID, category
VERSIONS_PER_QUERY = 2000


def _tombstones(namespace: Namespace) -> list[Tombstone]:
    retired = Entry.objects.filter(namespace=namespace, retired_at__isnull=False).select_related("live_version")
    tombstones = []
    for entry in retired.order_by("number"):
        live = entry.live_version
        if entry.retired_at is not None:
            tombstones.append(
                Tombstone(
                    id=entry.public_id,
                    title=live.title if live else "",
                    retired_at=rfc3339(entry.retired_at),
                    reason=entry.retire_reason,
                    replaced_by=entry.replaced_by or None,
                    sensitivity=live.sensitivity if live else "public",
                )
            )
    return tombstones


def _entry_records(namespace: Namespace, kept: dict[RecordKey, EntryRecord]) -> list[EntryRecord]:
    """The live entries' records in ID order; only versions `kept` does not hold are read in full.

    `kept` is a build's memo (knowledge.services.releases): afterwards it holds this read's records
    only. A key changes whenever the record could (a new live version, an edit, a renumbered or
    recategorised entry), so a kept record is the one a full read gives.
    """
    live = Entry.objects.filter(namespace=namespace, retired_at__isnull=True, live_version__isnull=False)
    # modified_at as the database writes it in text: as exact a key, without parsing a datetime per
    # entry (a tenth of a one-entry build at 10,000 entries).
    modified = Cast("live_version__modified_at", output_field=TextField())
    keys: list[RecordKey] = list(
        live.order_by("number")
        .annotate(modified=modified)
        .values_list("live_version_id", "modified", "public_id", "category__slug")
    )
    found: dict[RecordKey, EntryRecord] = {}
    by_version: dict[int, RecordKey] = {}
    held = kept.get
    for key in keys:  # one lookup a key (a build reads every live entry's)
        record = held(key)
        if record is None:
            by_version[key[0]] = key
        else:
            found[key] = record
    ids = list(by_version)
    for start in range(0, len(ids), VERSIONS_PER_QUERY):
        for version in EntryVersion.objects.filter(pk__in=ids[start : start + VERSIONS_PER_QUERY]):
            key = by_version[version.pk]
            found[key] = _record(public_id=key[2], category=key[3], version=version)
    kept.clear()
    kept.update(found)
    return [found[key] for key in keys]


def snapshot_read(
    *, namespace: Namespace, today: date | None = None, kept: dict[RecordKey, EntryRecord] | None = None
) -> Snapshot:
    """The published versions, tombstones, docs and prompt packs of a namespace, in ID order, with its
    bases' (layers_compose) and a tombstone for each ID it served from a layer that has left its bases
    since (layers_withdrawn; a build records those first: knowledge.services.layers_withdrawn).

    ``today`` (default: the local date) dates the entries' freshness: which are due (issue 12 §6).
    ``kept``: the entry records of the caller's previous read, reused where the version is the same.
    """
    records = _entry_records(namespace, {} if kept is None else kept)
    tombstones = _tombstones(namespace)
    docs = tuple(
        DocRecord(slug=d.slug, title=d.title, body=d.body) for d in DocPage.objects.filter(namespace=namespace)
    )
    packs = tuple((p.scenario, p.template) for p in PromptPack.objects.filter(namespace=namespace))
    ranking = RankingSettings(
        ranker=namespace.ranker,
        match_threshold=namespace.match_threshold,
        link_expansion=namespace.link_expansion,
        packing=namespace.packing,
        threshold_note=namespace.match_threshold_note if namespace.match_threshold is not None else "",
    )
    day = (today or timezone.localdate()).isoformat()
    due = tuple(e.id for e in records if (e.review_by is not None and e.review_by < day) or expired(e, revision=day))
    own = Snapshot(
        namespace=namespace_info(namespace=namespace),
        due=due,
        entries=without_dead_links(records),
        tombstones=tuple(tombstones),
        docs=docs,
        prompt_packs=packs,
        ranking=ranking,
        synonyms=published_synonyms(namespace=namespace),
        themes=published_themes(namespace=namespace),
    )
    composed = layers_compose(own, layers_read(namespace=namespace))
    withdrawn = withdrawn_list(namespace=namespace)
    if not withdrawn:  # a namespace that never lost a base: no further query
        return composed
    return layers_withdrawn(composed, withdrawn, layers=layer_slugs(namespace=namespace))


def published_themes(*, namespace: Namespace) -> tuple[ThemeRecord, ...]:
    """The live version of each theme (issue 16 §3), by position then slug."""
    texts = ReviewedText.objects.filter(namespace=namespace, kind=TextKind.THEME, live_version__isnull=False)
    themes = [(t.key, t.live_version.content) for t in texts.select_related("live_version") if t.live_version]
    themes.sort(key=lambda item: (item[1].get("position", 0), item[0]))
    return tuple(
        ThemeRecord(slug=key, title=c["title"], summary=c.get("summary", ""), entries=tuple(c.get("entries", ())))
        for key, c in themes
    )


def published_synonyms(*, namespace: Namespace) -> tuple[SynonymRule, ...]:
    """The live version of each synonym set that is switched on, by set name: what releases expand with."""
    sets = SynonymSet.objects.filter(namespace=namespace, live_version__enabled=True).select_related("live_version")
    return tuple(
        SynonymRule(phrases=tuple(s.live_version.phrases), two_way=s.live_version.two_way)
        for s in sets.order_by("name")
        if s.live_version is not None
    )
