"""A build worker's caches kept on disk (issue 18 §3): the first build after a restart reads, analyses and
renders only what changed, and stores the bytes a full rebuild renders; a cache of other code, another
database or damaged is a full build, never a failed one."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from knowledge.models import Namespace, Release
from knowledge.retrieval import manifests
from knowledge.retrieval.render.analysis_cache import AnalysisCache
from knowledge.services import build_cache, releases
from knowledge.services.releases import release_analysis_caches_clear
from tests.knowledge.test_incremental_publish import assert_stored_as_a_full_rebuild, many_rows
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

pytestmark = pytest.mark.django_db

EDITED = "Agents read alpha for free, and the pricing page moved."


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path) -> Any:
    settings.EVERGREEN = replace(settings.EVERGREEN, build_cache_dir=tmp_path / "build-cache")
    release_analysis_caches_clear()
    yield tmp_path / "build-cache"
    release_analysis_caches_clear()


def restart_and_publish_an_edit(namespace: Namespace) -> releases._BuildCaches:
    release_analysis_caches_clear()  # what a worker restart leaves: nothing in the process
    rows = alpha_rows()
    rows[1]["body"] = EDITED
    publish(namespace, [rows[1]], now=BUILT_AT.replace(hour=12))
    return releases._build_caches(namespace.pk)


def test_the_first_build_after_a_restart_analyses_only_the_changed_entry_and_stores_a_full_rebuild(
    ns_a: Namespace, cache_dir: Path
) -> None:
    publish(ns_a, alpha_rows())
    assert build_cache.cache_path(ns_a.pk).is_file()
    entries = len(alpha_rows())

    caches = restart_and_publish_an_edit(ns_a)

    assert caches.analysis.analysed == 1 and caches.analysis.reused == entries - 1
    assert caches.parts.rendered == 1 and caches.parts.reused == entries - 1
    assert_stored_as_a_full_rebuild(ns_a)


@pytest.mark.parametrize("spoil", ["other code", "damaged", "another database"])
def test_a_cache_that_does_not_apply_means_a_full_build_that_stores_the_same_bytes(
    ns_a: Namespace, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, spoil: str
) -> None:
    publish(ns_a, alpha_rows())
    path = build_cache.cache_path(ns_a.pk)
    if spoil == "other code":
        monkeypatch.setattr(build_cache, "code_digest", lambda: "0" * 64)
    elif spoil == "damaged":
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    else:
        monkeypatch.setattr(build_cache, "_database", lambda: "elsewhere:5432/evergreen")

    caches = restart_and_publish_an_edit(ns_a)

    assert caches.analysis.reused == 0 and caches.parts.reused == 0
    assert_stored_as_a_full_rebuild(ns_a)


def publish_an_edit(namespace: Namespace, row: int, body: str, hour: int) -> None:
    rows = alpha_rows()
    rows[row]["body"] = body
    publish(namespace, [rows[row]], now=BUILT_AT.replace(hour=hour))


@pytest.fixture
def deltas(monkeypatch: pytest.MonkeyPatch) -> None:
    """A delta however much changed (the test namespace has a handful of entries, not thousands)."""
    monkeypatch.setattr(build_cache, "DELTA_SHARE", 1)


def test_a_later_build_writes_only_what_changed_and_a_restart_reads_the_base_and_its_delta(
    ns_a: Namespace, cache_dir: Path, deltas: None
) -> None:
    publish(ns_a, alpha_rows())
    base = build_cache.cache_path(ns_a.pk)
    written = base.read_bytes()
    assert not build_cache.delta_path(ns_a.pk).exists()

    publish_an_edit(ns_a, 2, "Alpha's changelog moved to the docs site.", hour=11)

    assert base.read_bytes() == written  # the base file is not written again
    assert build_cache.delta_path(ns_a.pk).stat().st_size < len(written) // 2
    caches = restart_and_publish_an_edit(ns_a)  # the edit of the delta is reused, not analysed again
    assert caches.analysis.analysed == 1 and caches.analysis.reused == len(alpha_rows()) - 1
    assert caches.parts.rendered == 1 and caches.parts.reused == len(alpha_rows()) - 1
    assert_stored_as_a_full_rebuild(ns_a)


def test_a_delta_of_too_much_writes_the_base_again_and_removes_the_delta(ns_a: Namespace, cache_dir: Path) -> None:
    publish(ns_a, alpha_rows())
    base = build_cache.cache_path(ns_a.pk)
    written = base.read_bytes()

    publish_an_edit(ns_a, 2, "Alpha's changelog moved to the docs site.", hour=11)  # 1 of 3 > a tenth

    assert base.read_bytes() != written and not build_cache.delta_path(ns_a.pk).exists()


class Killed(BaseException):
    """A worker killed at this point (SIGKILL): nothing after it runs, the temporary file stays."""


KILLED = ("writing the delta", "renaming the delta", "writing the base", "removing the old delta")


@pytest.mark.parametrize("killed", KILLED)
def test_a_worker_killed_while_saving_leaves_caches_that_start_a_consistent_build(
    ns_a: Namespace, cache_dir: Path, deltas: None, monkeypatch: pytest.MonkeyPatch, killed: str
) -> None:
    publish(ns_a, alpha_rows())
    publish_an_edit(ns_a, 2, "Alpha's changelog moved to the docs site.", hour=11)  # a delta on disk
    if killed in ("writing the base", "removing the old delta"):  # 1 of 3 entries changed: the base again
        monkeypatch.setattr(build_cache, "DELTA_SHARE", 10)
    if killed.startswith("writing"):

        def pieces(meta: Any, arrays: Any) -> Any:
            yield b"EGIX"
            raise Killed

        monkeypatch.setattr(build_cache, "pack_pieces", pieces)
    elif killed == "renaming the delta":
        monkeypatch.setattr(build_cache.os, "replace", lambda *_: (_ for _ in ()).throw(Killed()))
    else:  # the new base is in place, the delta of the old one is still there
        unlink = Path.unlink

        def killed_at_the_delta(path: Path, *args: Any, **kwargs: Any) -> None:
            if path == build_cache.delta_path(ns_a.pk):
                raise Killed
            unlink(path, *args, **kwargs)

        monkeypatch.setattr(Path, "unlink", killed_at_the_delta)
    with pytest.raises(Killed):
        publish_an_edit(ns_a, 0, "Alpha ships every Wednesday now.", hour=12)
    monkeypatch.undo()
    assert build_cache.delta_path(ns_a.pk).is_file()  # the last delta, or one of the base before

    caches = restart_and_publish_an_edit(ns_a)

    assert caches.analysis.reused >= len(alpha_rows()) - 2  # what the caches on disk held still applies
    assert_stored_as_a_full_rebuild(ns_a)


@pytest.mark.parametrize("spoil", ["damaged", "of another base"])
def test_a_delta_that_does_not_apply_leaves_the_base_alone_and_the_build_consistent(
    ns_a: Namespace, cache_dir: Path, deltas: None, spoil: str
) -> None:
    publish(ns_a, alpha_rows())
    publish_an_edit(ns_a, 2, "Alpha's changelog moved to the docs site.", hour=11)
    delta = build_cache.delta_path(ns_a.pk)
    if spoil == "damaged":
        delta.write_bytes(delta.read_bytes()[: delta.stat().st_size // 2])
    else:  # a base written by another process meanwhile
        base = build_cache.cache_path(ns_a.pk)
        token = build_cache._base_token_on_disk(ns_a.pk)
        assert token is not None
        base.write_bytes(base.read_bytes().replace(token.encode(), token[::-1].upper().encode(), 1))

    caches = restart_and_publish_an_edit(ns_a)

    assert caches.analysis.reused == len(alpha_rows()) - 2  # the base's, not the delta's edit
    assert_stored_as_a_full_rebuild(ns_a)


def test_a_patching_build_after_a_restart_never_reads_the_analyses_it_restored(
    ns_a: Namespace, cache_dir: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A one-entry build that patches the index analyses the changed entry alone: the other entries'
    analysed terms stay in the cache file (the worker's peak memory at 100,000 entries, issue 18 §3)."""
    rows = many_rows(60)
    publish(ns_a, rows)
    release_analysis_caches_clear()  # a restart
    taken: list[int] = []
    take = AnalysisCache._take_pending

    def counted(self: AnalysisCache) -> None:
        taken.append(len(self._pending))
        take(self)

    monkeypatch.setattr(AnalysisCache, "_take_pending", counted)
    rows[5]["body"] = rows[5]["body"].replace("batches", "small batches")
    with caplog.at_level(logging.INFO, logger="knowledge.retrieval.patching"):
        publish(ns_a, [rows[5]], now=BUILT_AT.replace(hour=12))

    assert "Index patched" in caplog.text
    assert not any(taken), "the restored analyses were read"
    caches = releases._build_caches(ns_a.pk)
    assert caches.analysis.analysed == 1 and not caches.analysis.pending()
    assert_stored_as_a_full_rebuild(ns_a)


def test_one_entry_builds_that_patch_the_index_write_a_delta_not_the_base_again(
    ns_a: Namespace, cache_dir: Path
) -> None:
    """A worker without caches patches the index analysing the changed entry alone, so the base it
    writes holds a single analysis; its next one-entry build (one record, one analysis) is still small
    against the base's 60 records and is written as a delta (measured against the base's analyses,
    each such build wrote the whole base again: about 1 s of CPU at 100,000 entries, issue 18 §3)."""
    rows = many_rows(60)
    publish(ns_a, rows)
    for path in cache_dir.iterdir():
        path.unlink()
    release_analysis_caches_clear()  # a new worker, and nothing on disk
    rows[5]["body"] = rows[5]["body"].replace("batches", "small batches")
    publish(ns_a, [rows[5]], now=BUILT_AT.replace(hour=11))
    written = build_cache.cache_path(ns_a.pk).read_bytes()

    rows[6]["body"] = rows[6]["body"].replace("batches", "small batches")
    publish(ns_a, [rows[6]], now=BUILT_AT.replace(hour=12))

    assert build_cache.cache_path(ns_a.pk).read_bytes() == written
    assert build_cache.delta_path(ns_a.pk).is_file()
    caches = restart_and_publish_an_edit(ns_a)
    assert caches.parts.rendered == 1
    assert_stored_as_a_full_rebuild(ns_a)


def test_a_build_keeps_one_copy_of_a_manifest_stored_whole_and_its_release_holds_it(
    ns_a: Namespace, cache_dir: Path
) -> None:
    """A first release stores its manifest whole: the cache kept two copies of it (43 MB each at
    100,000 entries) and the build held its own beside them through the cache save, a full build's peak."""
    publish(ns_a, alpha_rows())
    release = Release.objects.get(namespace=ns_a)
    stored, whole, hashes = releases._build_caches(ns_a.pk).manifests[release.pk]

    assert stored is whole
    assert hashes == {item["id"]: item["hash"] for item in release.manifest["entries"]}
    assert whole == release.manifest and [e["id"] for e in whole["entries"]] == sorted(r["id"] for r in alpha_rows())


def test_a_build_keeps_a_delta_releases_manifest_as_the_database_gives_it_back_and_bumps_from_it(
    ns_a: Namespace, cache_dir: Path
) -> None:
    """The kept manifest of a release stored as a delta keeps the build's entries (no JSON round trip of
    them) and the entries' hashes by ID, which the next build's version bump and lineage compare with."""
    publish(ns_a, alpha_rows())
    rows = alpha_rows()
    rows[1]["body"] = EDITED
    publish(ns_a, [rows[1]], now=BUILT_AT.replace(hour=12))
    second = Release.objects.get(namespace=ns_a, sequence=2)
    _, whole, hashes = releases._build_caches(ns_a.pk).manifests[second.pk]

    assert manifests.DELTA in second.manifest_stored
    assert whole == second.manifest  # resolved from the database, through the first release's
    assert hashes == second.manifest_hashes() == {item["id"]: item["hash"] for item in whole["entries"]}

    rows[2]["body"] = EDITED
    publish(ns_a, [rows[2]], now=BUILT_AT.replace(hour=13))
    third = Release.objects.get(namespace=ns_a, sequence=3)
    assert third.knowledge_version.split(".")[2] == str(int(second.knowledge_version.split(".")[2]) + 1)
    assert {key for key, value in third.manifest_hashes().items() if hashes[key] != value} == {rows[2]["id"]}
