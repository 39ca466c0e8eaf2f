"""Incremental release builds: only changed entries are analysed again, and the bytes equal a full build's."""

from __future__ import annotations

import logging
import tracemalloc
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knowledge.models import Artifact, Namespace, Release
from knowledge.retrieval import postings
from knowledge.retrieval.analysis import AnalyzerConfig
from knowledge.retrieval.render import analysis_cache, context_json, sitemap
from knowledge.retrieval.render.parts import PartsCache
from knowledge.retrieval.render.release import AnalysisCache, references_from, render_release
from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp, Snapshot
from knowledge.selectors.calibration import recorded_lineage
from knowledge.selectors.snapshots import snapshot_read
from knowledge.services.releases import release_analysis_caches_clear
from tests.retrieval.helpers import demo_namespace, demo_records, make_document
from tests.servingfixtures import alpha_rows, publish

STAMP = ReleaseStamp(sequence=3, knowledge_version="1.1.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")
NAMESPACE = demo_namespace(rules=("rule one",))


DEMO = tuple(sorted(demo_records(), key=str))


def snapshot_of(entries: tuple[EntryRecord, ...]) -> Snapshot:
    return Snapshot(namespace=NAMESPACE, entries=tuple(sorted(entries, key=lambda e: e.id)))


def rendered(
    snapshot: Snapshot, cache: AnalysisCache | None = None, parts: PartsCache | None = None
) -> dict[str, bytes]:
    return {
        artifact.name: artifact.content for artifact in render_release(snapshot, STAMP, analysis=cache, parts=parts)
    }


def test_after_a_one_entry_change_only_that_entry_is_analysed_and_the_release_equals_a_full_build() -> None:
    cache = AnalysisCache()
    rendered(snapshot_of(DEMO), cache)
    assert (cache.analysed, cache.reused) == (len(DEMO), 0)

    changed = list(DEMO)
    changed[3] = replace(changed[3], body=changed[3].body + " 新增一句关于 token 预算的话。")
    after = snapshot_of(tuple(changed))

    assert rendered(after, cache) == rendered(after)
    assert (cache.analysed, cache.reused) == (1, len(DEMO) - 1)


def test_the_engine_analyses_entries_its_own_way_again_after_an_incremental_build() -> None:
    original = postings.analyze_fields
    rendered(snapshot_of(DEMO), AnalysisCache())
    assert postings.analyze_fields is original


def test_the_cache_keeps_only_what_the_last_build_used() -> None:
    cache = AnalysisCache()
    rendered(snapshot_of(DEMO), cache)
    everything = len(cache)
    rendered(snapshot_of(DEMO[:5]), cache)
    kept = len(cache)
    assert 5 <= kept < everything  # the five entries, and calibration's held-out copies made of them
    rendered(snapshot_of(DEMO[:5]), cache)
    assert (len(cache), cache.analysed) == (kept, 0)


def test_the_cache_drops_the_terms_no_kept_entry_uses_and_builds_the_same_bytes() -> None:
    cache = AnalysisCache()
    rendered(snapshot_of(DEMO), cache)
    terms = len(cache._terms)
    fewer = snapshot_of(DEMO[:3])
    rendered(fewer, cache)
    assert len(cache._terms) < terms / 2  # compacted
    assert rendered(fewer, cache) == rendered(fewer)


def test_compacting_marks_the_term_ids_in_use_without_joining_and_sorting_them_all(monkeypatch: Any) -> None:
    """np.unique of every occurrence joined held a sorted copy of them (109 MiB and 1.7 s after a full
    build at 100,000 entries); marking them a group of documents at a time holds a group's."""
    monkeypatch.setattr(analysis_cache, "COMPACT_GROUP", 20)
    words = [f"w{n}" for n in range(3000)]
    documents = [
        make_document(f"EG-{n}", f"title {n}", body=" ".join(words[(n * 37 + k * 11) % 3000] for k in range(80)))
        for n in range(1, 801)
    ]
    cache = AnalysisCache()
    with cache.building():
        cache.collect(documents, AnalyzerConfig())
    occurrences = sum(a.ids.nbytes for a in cache._entries.values())
    terms = len(cache._terms)
    tracemalloc.start()
    try:
        cache._compact()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

    assert len(cache._terms) == terms  # every term in use: nothing to drop
    assert peak < occurrences / 2, (peak, occurrences)


def test_a_cached_analysis_is_the_analysis_of_the_same_analyzer() -> None:
    document = make_document("EG-101", "Token 预算 budgets", body="Searching searched 分词的结果。Another sentence.")
    cache = AnalysisCache()
    for config in (AnalyzerConfig(), AnalyzerConfig(stem=False), AnalyzerConfig()):
        assert cache.fields(document, config, analyze=postings.analyze_fields) == postings.analyze_fields(
            document, config
        )
    assert (cache.analysed, cache.reused) == (3, 0)
    assert cache.fields(document, AnalyzerConfig(), analyze=postings.analyze_fields)
    assert cache.reused == 1


EDIT_TEXT = st.sampled_from(
    [
        "",
        "token budget",
        "Token 预算不足时调高 budget。",
        "heat transfer on a flat plate.",
        "新的实体：常青。",
        "EG-202",
    ]
)


@st.composite
def edits(draw: st.DrawFn) -> list[tuple[str, int, str]]:
    """A few edits to the demo entries: change a field, drop an entry, add one."""
    kinds = st.sampled_from(["title", "summary", "body", "tags", "drop", "add"])
    return draw(st.lists(st.tuples(kinds, st.integers(0, len(DEMO) - 1), EDIT_TEXT), min_size=1, max_size=4))


def apply(entries: list[EntryRecord], edit: tuple[str, int, str], serial: int) -> list[EntryRecord]:
    kind, at, text = edit
    at %= max(len(entries), 1)
    if kind == "drop" and len(entries) > 1:
        return entries[:at] + entries[at + 1 :]
    if kind == "add" or not entries:
        new = replace(DEMO[0], id=f"EG-{900 + serial:03d}", title=f"New {text}", body=text)
        return [*entries, new]
    if kind == "tags":
        return [*entries[:at], replace(entries[at], tags=(text,) if text else ()), *entries[at + 1 :]]
    if kind == "drop":
        return entries
    change: dict[str, Any] = {kind: text}
    return [*entries[:at], replace(entries[at], **change), *entries[at + 1 :]]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits(), st.sampled_from([9, 12, 50_000]), st.sampled_from([1, 3, 256]))
def test_any_sequence_of_edits_builds_the_same_bytes_incrementally_as_in_full(
    sequence: list[Any], limit: int, group: int
) -> None:
    """With the analysis and the parts kept (context.json's entries, `group` at a time, and the sitemap's
    files, here of `limit` URLs)."""
    cache, parts = AnalysisCache(), PartsCache()
    entries = list(DEMO)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sitemap, "SITEMAP_MAX_URLS", limit)
        patch.setattr(context_json, "GROUP", group)
        rendered(snapshot_of(tuple(entries)), cache, parts)
        for serial, edit in enumerate(sequence):
            entries = apply(entries, edit, serial)
            snapshot = snapshot_of(tuple(entries))
            assert rendered(snapshot, cache, parts) == rendered(snapshot)


def test_a_one_entry_change_renders_only_its_sitemap_part_and_context_json_entry(monkeypatch: Any) -> None:
    monkeypatch.setattr(sitemap, "SITEMAP_MAX_URLS", 8)
    parts = PartsCache()
    first = {a.name: a for a in render_release(snapshot_of(DEMO), STAMP, parts=parts)}
    changed = list(DEMO)
    changed[-1] = replace(changed[-1], updated="2030-01-01")

    second = {a.name: a for a in render_release(snapshot_of(tuple(changed)), STAMP, parts=parts)}

    new = sorted(name for name in second if name.startswith("sitemaps/") and second[name] is not first[name])
    assert new == [max(second, key=lambda name: (name.startswith("sitemaps/"), len(name), name))]
    assert (parts.rendered, parts.reused) == (1, len(DEMO) - 1)


LATER = datetime(2026, 9, 3, 8, 0, 0, tzinfo=UTC)


def stamp_of(release: Release) -> ReleaseStamp:
    return ReleaseStamp(
        sequence=release.sequence,
        knowledge_version=release.knowledge_version,
        revision=release.revision.isoformat(),
        generated_at=release.built_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


@pytest.mark.django_db
def test_a_publish_builds_incrementally_and_stores_what_a_full_build_renders(
    ns_a: Namespace, caplog: pytest.LogCaptureFixture
) -> None:
    release_analysis_caches_clear()
    publish(ns_a, alpha_rows())
    rows = alpha_rows()
    rows[1]["body"] = "Agents read alpha for free, and now the beta zeppelin too."
    with caplog.at_level(logging.INFO, logger="knowledge.services.releases"):
        namespace = publish(ns_a, rows, now=LATER)

    release = namespace.active_release
    assert release is not None and release.sequence == 2
    stored = {a.name: bytes(a.content) for a in Artifact.objects.filter(release=release)}
    snapshot = snapshot_read(namespace=namespace)
    full = {
        a.name: a.content
        for a in render_release(
            snapshot, stamp_of(release), references=references_from(release.manifest), lineage=recorded_lineage(release)
        )
    }
    assert stored == full
    assert "1 entries analysed, 2 reused" in caplog.text


@pytest.mark.django_db
def test_artifacts_are_stored_with_lz4_on_postgresql(ns_a: Namespace) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("TOAST compression is PostgreSQL's")
    rows = alpha_rows()
    rows[0]["body"] = "Alpha ships every Tuesday and every entry is long enough to be compressed. " * 200
    release = publish(ns_a, rows).active_release
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(b.content) FROM knowledge_artifact a "
            "JOIN knowledge_artifactpart p ON p.artifact_id = a.id JOIN knowledge_artifactblob b ON b.id = p.blob_id "
            "WHERE a.release_id = %s AND a.name = %s",
            [release.pk if release else None, "context.json"],
        )
        assert cursor.fetchone() == ("lz4",)


@pytest.mark.parametrize("manifest", [[], {}, {"entries": []}, {"index": "not a mapping"}])
def test_a_manifest_without_recorded_statistics_gives_none(manifest: object) -> None:
    # A release recorded before reference statistics existed (or a bare list) keeps nothing; the
    # review page's golden preview reads the latest release's manifest and must not fail on it.
    assert references_from(manifest) == {}
