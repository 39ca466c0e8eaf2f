"""Releases: built from published versions, idempotent, coalesced, validated, rolled back byte for byte."""

from __future__ import annotations

import hashlib
import json
import mmap
from pathlib import Path
from typing import Any

import orjson
import pytest

from knowledge.models import Artifact, BuildStatus, EntryVersion, Namespace, Release, ReleaseBuild
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.relevance import BEST_SHARE
from knowledge.retrieval.render import release as release_render
from knowledge.selectors.snapshots import snapshot_read
from knowledge.services import releases
from knowledge.services.entries import entry_create, entry_retire
from knowledge.services.releases import release_build
from knowledge.services.rollback import release_rollback
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_save,
    version_submit,
)
from knowledge.tasks import release_build_task
from tests.factories import committed, content

pytestmark = pytest.mark.django_db


def write_and_publish(ns: Namespace, editor: Any, reviewer: Any, **fields: Any) -> EntryVersion:
    version = entry_create(
        namespace=ns, category=ns.categories.get(slug="fact"), content=content(**fields), actor=editor
    )
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    return version_publish(version=version, actor=reviewer)


def publish_new(ns: Namespace, editor: Any, reviewer: Any, **fields: Any) -> EntryVersion:
    with committed():
        return write_and_publish(ns, editor, reviewer, **fields)


def artifacts(release: Release) -> dict[str, bytes]:
    return {a.name: bytes(a.content) for a in Artifact.objects.filter(release=release)}


def test_publish_builds_and_activates_a_release_on_commit(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        write_and_publish(ns_a, editor, reviewer)
    # the build's request, then (run by it) the announcement of the switch to web workers
    assert [callback.func.__name__ for callback in callbacks] == ["build_enqueue", "release_switch_announce"]
    ns_a.refresh_from_db()
    release = ns_a.active_release
    assert release is not None
    assert release.knowledge_version == "1.0.0"
    assert release.manifest["entries"][0]["id"] == "AL-000"
    assert {"context.json", "llms.txt", "llms-full.txt", "search.index"} <= set(artifacts(release))


def test_nothing_is_enqueued_before_commit(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        write_and_publish(ns_a, editor, reviewer)
    assert len(callbacks) == 1
    assert not Release.objects.filter(namespace=ns_a).exists()


def test_builds_are_idempotent(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        write_and_publish(ns_a, editor, reviewer)
    first = release_build_task.apply(args=[ns_a.pk]).get()
    second = release_build_task.apply(args=[ns_a.pk]).get()
    assert first == second
    assert Release.objects.filter(namespace=ns_a).count() == 1
    assert list(ReleaseBuild.objects.filter(namespace=ns_a).order_by("pk").values_list("status", flat=True)) == [
        BuildStatus.SUCCEEDED,
        BuildStatus.UNCHANGED,
    ]


def test_same_inputs_render_byte_identical_artifacts(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    publish_new(ns_a, editor, reviewer)
    release = Release.objects.get(namespace=ns_a)
    stamp = release_render.ReleaseStamp(
        sequence=release.sequence,
        knowledge_version=release.knowledge_version,
        revision=release.revision.isoformat(),
        generated_at=release.built_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )
    rendered = {a.name: a.content for a in release_render.render_release(snapshot_read(namespace=ns_a), stamp)}
    assert rendered == artifacts(release)


def test_a_burst_of_publishes_builds_one_release(
    ns_a: Namespace, editor: Any, reviewer: Any, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        for n in range(10):
            write_and_publish(ns_a, editor, reviewer, title=f"Fact {n}")
    assert Release.objects.filter(namespace=ns_a).count() == 1
    assert Release.objects.get(namespace=ns_a).entry_count == 10


def test_versions_bump_by_what_changed(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    live = publish_new(ns_a, editor, reviewer)
    publish_new(ns_a, editor, reviewer, title="Another fact")
    draft = version_draft_for_entry(entry=live.entry, actor=editor)
    version_save(version=draft, content=content(body="Edited."), expected_lock_version=0, actor=editor)
    version_submit(version=draft, actor=editor)
    version_approve(version=draft, actor=reviewer)
    with committed():
        version_publish(version=draft, actor=reviewer)
    with committed():
        entry_retire(entry=live.entry, actor=reviewer, reason="Wrong.")
    versions = list(
        Release.objects.filter(namespace=ns_a).order_by("sequence").values_list("knowledge_version", flat=True)
    )
    assert versions == ["1.0.0", "1.1.0", "1.1.1", "2.0.0"]


def test_a_failed_build_leaves_the_previous_release_serving(
    ns_a: Namespace, editor: Any, reviewer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    publish_new(ns_a, editor, reviewer)
    ns_a.refresh_from_db()
    before = ns_a.active_release_id

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr("knowledge.services.releases.render_release", broken)
    publish_new(ns_a, editor, reviewer, title="Second fact")  # its build fails in-process
    ns_a.refresh_from_db()
    assert ns_a.active_release_id == before
    failed = ReleaseBuild.objects.filter(namespace=ns_a, status=BuildStatus.FAILED).get()
    assert "disk full" in failed.error
    monkeypatch.undo()
    outcome = release_build(namespace_id=ns_a.pk)
    assert outcome.activated
    assert outcome.release.entry_count == 2


def test_rollback_restores_the_earlier_release_byte_for_byte(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    publish_new(ns_a, editor, reviewer)
    first = Release.objects.get(namespace=ns_a)
    before = artifacts(first)
    publish_new(ns_a, editor, reviewer, title="Second fact")
    ns_a.refresh_from_db()
    assert ns_a.active_release_id != first.pk
    release_rollback(namespace=ns_a, release=first, actor=reviewer)
    ns_a.refresh_from_db()
    assert ns_a.active_release_id == first.pk
    assert ns_a.active_release is not None
    assert artifacts(ns_a.active_release) == before


def test_rollback_needs_a_reviewer(ns_a: Namespace, editor: Any, reviewer: Any, outsider: Any) -> None:
    publish_new(ns_a, editor, reviewer)
    publish_new(ns_a, editor, reviewer, title="Second fact")
    first = Release.objects.get(namespace=ns_a, sequence=1)
    with pytest.raises(Exception, match="not a reviewer"):
        release_rollback(namespace=ns_a, release=first, actor=outsider)


def test_retired_entries_become_tombstones(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    live = publish_new(ns_a, editor, reviewer)
    with committed():
        entry_retire(entry=live.entry, actor=reviewer, reason="Superseded by the 2027 policy.")
    ns_a.refresh_from_db()
    active = ns_a.active_release
    assert active is not None
    assert active.manifest["entries"] == []
    assert active.manifest["retired"] == ["AL-000"]
    assert b'"retired":[{"id":"AL-000"' in artifacts(active)["context.json"]


def test_every_release_calibrates_its_threshold_and_records_how(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    publish_new(ns_a, editor, reviewer)
    release = Namespace.objects.get(pk=ns_a.pk).active_release
    assert release is not None

    matching = release.metrics["matching"]

    assert matching["source"] == "automatic"
    assert matching["probes"] >= 400 and matching["probes_refused"] >= 0.95
    assert matching["pseudo_questions"] <= release.entry_count
    index = SearchIndex.from_bytes(artifacts(release)["search.index"])
    assert index.match_threshold == matching["threshold"]
    # The pack floor relative to the best hit is calibrated with it and served from the index.
    assert matching["pack_best_share"] in (0.0, BEST_SHARE) and "crowding" in matching
    assert index.options.pack_best_share == matching["pack_best_share"]


def test_aliases_are_content_they_change_the_hash_and_reach_the_index(
    ns_a: Namespace, editor: Any, reviewer: Any
) -> None:
    plain = content(title="预算纪律", body="按任务选预算档位。")
    aliased = content(title="预算纪律", body="按任务选预算档位。", aliases=["Budget discipline"])
    assert plain.content_hash != aliased.content_hash
    # A version without aliases keeps the hash it had before aliases existed.
    before = {
        "title": plain.title,
        "summary": plain.summary,
        "body": plain.body,
        "tags": list(plain.tags),
        "confidence": str(plain.confidence),
        "links": list(plain.links),
        "updated": plain.updated.isoformat(),
    }
    assert plain.content_hash == hashlib.sha256(orjson.dumps(before, option=orjson.OPT_SORT_KEYS)).hexdigest()

    publish_new(ns_a, editor, reviewer, title="预算纪律", body="按任务选预算档位。", aliases=["Budget discipline"])
    release = Namespace.objects.get(pk=ns_a.pk).active_release
    assert release is not None
    index = SearchIndex.from_bytes(artifacts(release)["search.index"])
    hit = next(iter(index.search("budget discipline")))

    assert index.public_id(hit.position) == "AL-000"
    assert b"Budget discipline" not in artifacts(release)["context.json"]  # agents do not receive aliases


@pytest.mark.parametrize("window", [7, 40, 1 << 20])
def test_validation_finds_the_same_entry_ids_in_a_mapped_context_json_a_window_at_a_time(
    window: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A spooled context.json is scanned a window at a time, its pages let go after each (issue 18 §3)."""
    entries = [{"id": f"EG-{n:03d}", "category": "fact", "body": f'a "quoted" {{"id":"no"}} {n}'} for n in range(40)]
    document = {"entries": entries, "categories": [{"id": "fact", "title": "Facts"}]}
    content = json.dumps(document, separators=(",", ":")).encode()
    monkeypatch.setattr(releases, "CONTEXT_SCAN_BYTES", window)
    monkeypatch.setattr(releases, "CONTEXT_SCAN_OVERLAP", 64)
    path = tmp_path / "context.json"
    path.write_bytes(content)
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        assert releases._context_ids(mapped) == releases._context_ids(content) == [e["id"] for e in entries]
