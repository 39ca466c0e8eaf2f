"""Incremental publishing (issue 18 §3): every release a worker builds from its caches is stored byte for byte
as a full rebuild of the same content renders it, whatever changed: an edit, an addition, a retirement, a
renamed category, a recategorised entry, a synonym set, a base namespace's change; and a build that dies
half-way stores nothing and leaves the last release serving."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from knowledge.models import Artifact, ArtifactBlob, Category, Entry, Namespace, Release
from knowledge.retrieval.render.release import references_from, render_release
from knowledge.retrieval.snapshot import ReleaseStamp
from knowledge.selectors.artifacts import artifact_contents
from knowledge.selectors.calibration import recorded_lineage
from knowledge.selectors.snapshots import snapshot_read
from knowledge.services import release_storage
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_analysis_caches_clear, release_build
from knowledge.services.synonyms import (
    SynonymContent,
    synonym_approve,
    synonym_publish,
    synonym_set_create,
    synonym_submit,
)
from tests.factories import NamespaceFactory
from tests.servingfixtures import BUILT_AT, alpha_rows, bases_declare, publish

pytestmark = pytest.mark.django_db


def stored(release: Release) -> dict[str, bytes]:
    names = Artifact.objects.filter(release=release).values_list("name", flat=True)
    return dict(artifact_contents(release_id=release.pk, names=list(names)))


def active(namespace: Namespace) -> Release:
    release = Namespace.objects.select_related("active_release").get(pk=namespace.pk).active_release
    assert release is not None
    return release


def rendered_in_full(namespace: Namespace) -> dict[str, bytes]:
    """What a fresh process renders for the namespace's active release: no cache of any build."""
    release = active(namespace)
    stamp = ReleaseStamp(
        sequence=release.sequence,
        knowledge_version=release.knowledge_version,
        revision=release.revision.isoformat(),
        generated_at=release.built_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    snapshot = snapshot_read(namespace=namespace, today=release.revision)
    # The same reference statistics as the release's indexes: those of the lineage, unless they drifted.
    # The same reference statistics and calibration record as the build (it carries the serving release's).
    references, lineage = references_from(release.manifest), recorded_lineage(release)
    return {a.name: a.content for a in render_release(snapshot, stamp, references=references, lineage=lineage)}


def assert_stored_as_a_full_rebuild(namespace: Namespace) -> None:
    release = active(namespace)
    files = stored(release)
    assert files == rendered_in_full(namespace), f"release {release.sequence} differs from a full rebuild"


def build(namespace: Namespace, step: int) -> Release:
    outcome = release_build(namespace_id=namespace.pk, now=BUILT_AT + timedelta(hours=step))
    assert outcome.created and outcome.activated
    return outcome.release


def test_each_incremental_release_is_stored_as_a_full_rebuild_renders_it(
    ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    release_analysis_caches_clear()
    rows = alpha_rows()
    publish(ns_a, rows)
    assert_stored_as_a_full_rebuild(ns_a)

    rows[1]["body"] = "Agents read alpha for free, and the pricing page moved."  # an edit
    publish(ns_a, [rows[1]], now=BUILT_AT + timedelta(hours=1))
    assert_stored_as_a_full_rebuild(ns_a)

    added = {**rows[0], "id": "AL-003", "title": "Alpha regions", "body": "Alpha runs in three regions."}
    publish(ns_a, [added], now=BUILT_AT + timedelta(hours=2))  # an addition
    assert_stored_as_a_full_rebuild(ns_a)

    entry_retire(entry=Entry.objects.get(public_id="AL-001"), actor=reviewer, reason="Merged into AL-003.")
    build(ns_a, 3)  # a retirement
    assert_stored_as_a_full_rebuild(ns_a)

    Category.objects.filter(namespace=ns_a, slug="fact").update(name="Facts and figures")
    build(ns_a, 4)  # a renamed category
    assert_stored_as_a_full_rebuild(ns_a)

    Entry.objects.filter(public_id="AL-003").update(category=Category.objects.get(namespace=ns_a, slug="rule"))
    build(ns_a, 5)  # an entry moved to another category (same version)
    assert_stored_as_a_full_rebuild(ns_a)

    version = synonym_set_create(
        namespace=ns_a, name="regions", content=SynonymContent.build(phrases=["regions", "zones"]), actor=editor
    )[1]
    synonym_submit(version=version, actor=editor)
    synonym_approve(version=version, actor=reviewer)
    synonym_publish(version=version, actor=reviewer)
    build(ns_a, 6)  # a synonym set
    assert_stored_as_a_full_rebuild(ns_a)


def test_a_namespace_built_on_a_base_is_stored_as_a_full_rebuild_after_the_base_changes(db: Any) -> None:
    release_analysis_caches_clear()
    company = publish(NamespaceFactory.create(slug="company", prefix="CO", name="Company"), alpha_rows_for("CO"))
    product = NamespaceFactory.create(slug="product", prefix="PR", name="Product")
    publish(bases_declare(product, company), alpha_rows_for("PR")[:1])
    assert_stored_as_a_full_rebuild(product)

    changed = alpha_rows_for("CO")[2]
    publish(company, [{**changed, "body": "Raise the budget when truncated, twice at most."}], now=datetime.now(UTC))
    build(product, 1)  # the base's new release reaches the product
    assert_stored_as_a_full_rebuild(product)


def alpha_rows_for(prefix: str) -> list[dict[str, Any]]:
    rows = alpha_rows()
    for row in rows:
        row["id"] = row["id"].replace("AL", prefix)
        row.pop("links", None)
    return rows


def test_a_build_that_fails_while_storing_its_chunks_leaves_the_last_release_serving_and_stores_nothing(
    ns_a: Namespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    release_analysis_caches_clear()
    rows = alpha_rows()
    publish(ns_a, rows)
    serving = active(ns_a)
    chunks = ArtifactBlob.objects.count()
    store = release_storage._blob_ids

    def killed_after_the_chunks(**kwargs: Any) -> Any:
        store(**kwargs)  # the new chunks are written, then the worker dies
        raise RuntimeError("worker lost")

    monkeypatch.setattr(release_storage, "_blob_ids", killed_after_the_chunks)
    rows[0]["body"] = "Alpha ships every Thursday from now on."
    with pytest.raises(RuntimeError, match="worker lost"):
        publish(ns_a, [rows[0]], now=BUILT_AT + timedelta(hours=1))

    assert active(ns_a) == serving and ArtifactBlob.objects.count() == chunks
    monkeypatch.undo()
    build(ns_a, 2)  # the caches saw the failed build's content: the next build still stores a full rebuild's bytes
    assert active(ns_a) != serving
    assert_stored_as_a_full_rebuild(ns_a)


TOPICS = ["harbour", "regions", "pricing", "budgets", "webhooks", "tokens", "releases", "tenants", "limits", "exports"]


def many_rows(count: int) -> list[dict[str, Any]]:
    """The alpha rows and more like them: enough entries that one change stays within the reference
    statistics' tolerance (postings.REFERENCE_DRIFT), so builds patch the previous index."""
    rows = [row for row in alpha_rows() if "links" not in row]
    for number in range(count - len(rows)):
        topic, other = TOPICS[number % len(TOPICS)], TOPICS[(number * 7 + 3) % len(TOPICS)]
        rows.append(
            {
                "id": f"AL-{500 + number}",
                "category": ("fact", "rule")[number % 2],
                "title": f"Alpha {topic} note {number}",
                "summary": f"How alpha handles {topic} and {other}.",
                "body": f"Alpha {topic} work in batches of {number}. The {other} settle after that. " * 2,
                "tags": [topic],
                "confidence": 0.9,
                "updated": "2026-08-01",
            }
        )
    return rows


def test_with_the_reference_statistics_kept_each_build_patches_the_stored_index_of_the_last_release(
    ns_a: Namespace, editor: Any, reviewer: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Every build below runs as a worker's first (no process cache): the patch reads the last release's
    stored index. Each release is stored byte for byte as a full rebuild against the same reference
    statistics renders it, and those statistics stay the first release's."""
    release_analysis_caches_clear()
    rows = many_rows(60)
    publish(ns_a, rows)
    reference = references_from(active(ns_a).manifest)
    assert reference

    def patched(step: Any) -> None:
        release_analysis_caches_clear()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="knowledge.retrieval.patching"):
            step()
        assert "Index patched" in caplog.text
        assert_stored_as_a_full_rebuild(ns_a)
        assert references_from(active(ns_a).manifest) == reference

    rows[5]["body"] = rows[5]["body"].replace("batches", "small batches")
    patched(lambda: publish(ns_a, [rows[5]], now=BUILT_AT + timedelta(hours=1)))  # an edit
    added = {**rows[7], "id": "AL-990", "title": "Alpha zeppelin note"}
    patched(lambda: publish(ns_a, [added], now=BUILT_AT + timedelta(hours=2)))  # an addition
    retired = Entry.objects.get(public_id="AL-510")
    patched(lambda: (entry_retire(entry=retired, actor=reviewer, reason="Merged."), build(ns_a, 3)))
    moved = Category.objects.get(namespace=ns_a, slug="fact" if added["category"] == "rule" else "rule")
    patched(lambda: (Entry.objects.filter(public_id="AL-990").update(category=moved), build(ns_a, 4)))

    def synonyms() -> None:
        content = SynonymContent.build(phrases=["regions", "zones"])
        version = synonym_set_create(namespace=ns_a, name="regions", content=content, actor=editor)[1]
        synonym_submit(version=version, actor=editor)
        synonym_approve(version=version, actor=reviewer)
        synonym_publish(version=version, actor=reviewer)
        build(ns_a, 5)

    patched(synonyms)
