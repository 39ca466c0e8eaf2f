"""Release storage (issue 18 §4): files shared between releases by content hash, and the retention policy."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db.models import Sum
from django.utils import timezone
from django.utils.html import escape

from bench.datasets import DATASETS
from knowledge.models import (
    Artifact,
    ArtifactBlob,
    ArtifactPart,
    AuditRecord,
    Namespace,
    Release,
    ReleaseActivation,
    Role,
)
from knowledge.retrieval.chunks import CHUNK_MAX, FILE_CHUNKS, ChunkSizes
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render.release import CONTEXT_JSON, LLMS_FULL_TXT, SEARCH_INDEX, RenderedArtifact
from knowledge.selectors.artifacts import artifact_content, artifact_stream
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services import release_storage
from knowledge.services.release_storage import FilesRestoreError, artifacts_store, releases_prune
from knowledge.services.releases import release_activate, release_build
from knowledge.services.rollback import release_rollback
from tests.configure import configure
from tests.factories import UserFactory, membership
from tests.retrieval.test_chunks import text
from tests.retrieval.test_index_format import as_format_1
from tests.servingfixtures import BUILT_AT, alpha_rows, clean_serving_state, publish

pytestmark = pytest.mark.django_db
__all__ = ["clean_serving_state"]  # autouse: fresh serving caches per test

LONG_AGO = BUILT_AT - timedelta(days=30)


@pytest.fixture
def alpha(ns_a: Namespace, settings: Any) -> Namespace:
    """Release 1 of alpha; only releases that served within the last day count as pinned."""
    configure(settings, release_retention_days=1)
    return publish(ns_a, alpha_rows())


def change(namespace: Namespace, body: str) -> Release:
    """Publish a new body of AL-001 and build: the next release."""
    publish(namespace, [{**alpha_rows()[0], "body": body}])
    return Release.objects.filter(namespace=namespace).order_by("-sequence").first()  # type: ignore[return-value]


def change_rows(namespace: Namespace, rows: list[dict[str, Any]]) -> Release:
    publish(namespace, rows, now=BUILT_AT + timedelta(hours=1))
    return Release.objects.filter(namespace=namespace).order_by("-sequence").first()  # type: ignore[return-value]


def release(namespace: Namespace, sequence: int) -> Release:
    return Release.objects.get(namespace=namespace, sequence=sequence)


def files(r: Release) -> dict[str, Artifact]:
    return {a.name: a for a in Artifact.objects.filter(release=r)}


def chunks(artifact: Artifact) -> list[int]:
    return list(artifact.parts.order_by("position").values_list("blob_id", flat=True))


def age_everything(namespace: Namespace) -> None:
    """Nothing served recently: no release is pinned by the retention window (they were built at BUILT_AT)."""
    ReleaseActivation.objects.filter(namespace=namespace).update(at=LONG_AGO)


def test_a_publish_stores_only_the_files_it_changed(alpha: Namespace) -> None:
    first = release(alpha, 1)
    second = change(alpha, "Alpha ships every Wednesday now.")

    before, after = files(first), files(second)
    same = [name for name in after if name in before and after[name].etag == before[name].etag]
    changed = [name for name in after if name not in same]
    assert same and changed  # files of untouched categories stay; llms.txt and the index change
    assert all(chunks(after[name]) == chunks(before[name]) for name in same)
    earlier = {blob for a in before.values() for blob in chunks(a)}
    assert all(not earlier & set(chunks(after[name])) for name in changed)
    stored = ArtifactBlob.objects.filter(namespace=alpha).aggregate(total=Sum("size"))["total"]
    listed = Artifact.objects.filter(release__namespace=alpha).aggregate(total=Sum("size"))["total"]
    assert stored == sum(a.size for a in before.values()) + sum(after[name].size for name in changed) < listed
    assert after[same[0]].content == before[same[0]].content


def test_the_policy_never_prunes_the_active_release_the_newest_or_a_pinned_one(
    client: Any, alpha: Namespace, reviewer: Any
) -> None:
    for n in range(3):
        change(alpha, f"Alpha ships on day {n}.")  # releases 2, 3 and 4
    age_everything(alpha)
    # Release 2 serves again (as a rollback leaves it); release 3 was built within the window (pinned).
    release_activate(namespace_id=alpha.pk, release=release(alpha, 2), serial=alpha.content_serial + 10)
    ReleaseActivation.objects.filter(namespace=alpha).update(at=LONG_AGO)
    Release.objects.filter(pk=release(alpha, 3).pk).update(built_at=timezone.now())
    rows = Artifact.objects.count()

    report = releases_prune(namespace=alpha, keep=1, actor=reviewer)

    assert report.pruned == [1] and report.kept == 3 and report.blobs_deleted > 0 and report.bytes_freed > 0
    assert [r.sequence for r in Release.objects.filter(namespace=alpha, files_pruned_at__isnull=False)] == [1]
    assert Artifact.objects.count() == rows  # the file list and ETags stay; only contents go
    assert not ArtifactPart.objects.filter(artifact__release=release(alpha, 1)).exists()
    assert not Artifact.objects.filter(release__sequence__gt=1, size__gt=0, parts__isnull=True).exists()
    served = client.get("/t/alpha/llms.txt")
    assert served.status_code == 200 and served["Evergreen-Release"] == "2"
    assert served.content == files(release(alpha, 2))["llms.txt"].content
    pinned = client.get("/t/alpha/llms.txt?release=1")
    assert pinned.status_code == 410 and pinned.json()["error"]["code"] == "release_expired"
    assert client.get("/t/alpha/llms.txt?release=3").status_code == 200
    assert AuditRecord.objects.filter(namespace=alpha, action="prune", actor=reviewer).count() == 1

    # Once release 3 is no longer pinned it goes too; the newest (4) and the active one (2) stay.
    Release.objects.filter(pk=release(alpha, 3).pk).update(built_at=BUILT_AT)
    assert releases_prune(namespace=alpha, keep=1, actor=reviewer).pruned == [3]
    assert releases_prune(namespace=alpha, keep=1, actor=reviewer).pruned == []


def test_rolling_back_to_a_pruned_release_renders_its_files_again(client: Any, alpha: Namespace, reviewer: Any) -> None:
    pruned_llms = files(release(alpha, 1))["llms.txt"]
    change(alpha, "Alpha ships every Wednesday now.")
    age_everything(alpha)
    assert releases_prune(namespace=alpha, keep=1, actor=reviewer).pruned == [1]

    outcome = release_rollback(namespace=alpha, release=release(alpha, 1), actor=reviewer)
    assert not outcome.activated  # its files are gone: the build renders them first
    build = release_build(namespace_id=alpha.pk, now=BUILT_AT)
    serving_caches_clear()

    assert build.release.sequence == 1 and build.activated
    assert release(alpha, 1).files_pruned_at is None
    served = client.get("/t/alpha/llms.txt")
    assert served["Evergreen-Release"] == "1" and served["ETag"].strip('"W/') in pruned_llms.etag
    assert served.content == files(release(alpha, 1))["llms.txt"].content


def rollback_to_pruned_first_release(namespace: Namespace, reviewer: Any) -> None:
    change(namespace, "Alpha ships every Wednesday now.")
    age_everything(namespace)
    assert releases_prune(namespace=namespace, keep=1, actor=reviewer).pruned == [1]
    release_rollback(namespace=namespace, release=release(namespace, 1), actor=reviewer)


def test_a_release_pruned_with_an_older_index_format_comes_back_with_todays(
    client: Any, alpha: Namespace, reviewer: Any
) -> None:
    """An index is never served and its format follows the code: a release built before format 2
    recorded a format 1 index, and rendering it again gives today's, which answers the same."""
    stored = files(release(alpha, 1))[SEARCH_INDEX]
    format_1 = as_format_1(SearchIndex.from_bytes(stored.content))
    old = RenderedArtifact.written(SEARCH_INDEX, stored.content_type, [format_1])
    Artifact.objects.filter(pk=stored.pk).update(etag=old.etag, size=old.size)
    rollback_to_pruned_first_release(alpha, reviewer)

    build = release_build(namespace_id=alpha.pk, now=BUILT_AT)
    serving_caches_clear()

    assert build.release.sequence == 1 and build.activated and release(alpha, 1).files_pruned_at is None
    restored = files(release(alpha, 1))[SEARCH_INDEX]
    assert restored.etag == stored.etag and restored.content == stored.content
    served = client.get("/t/alpha/api/context", {"topic": "alpha ships"})
    assert served.status_code == 200 and served["Evergreen-Release"] == "1"


def test_a_release_stored_with_other_cut_points_serves_and_comes_back_with_todays(
    client: Any, ns_a: Namespace, reviewer: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cut points follow the chunker (FastCDC since issue 18 §3, an eight-byte window hash before):
    a release stored with other cuts reads back whole, beside a newer one stored with today's, and a
    rollback after pruning stores it again with today's."""
    configure(settings, release_retention_days=1)

    def other_cuts(data: Any, sizes: Any = None) -> Iterator[int]:
        yield from range(1000, len(data), 1000)
        if len(data):
            yield len(data)

    with monkeypatch.context() as patched:
        patched.setattr(release_storage, "chunk_ends", other_cuts)
        publish(ns_a, alpha_rows())
    stored = {name: (a.etag, a.content) for name, a in files(release(ns_a, 1)).items()}
    assert len(chunks(files(release(ns_a, 1))["llms.txt"])) > 1
    change(ns_a, "Alpha ships every Wednesday now.")
    assert {name: (a.etag, a.content) for name, a in files(release(ns_a, 1)).items()} == stored
    assert client.get("/t/alpha/llms.txt").content == files(release(ns_a, 2))["llms.txt"].content

    age_everything(ns_a)
    assert releases_prune(namespace=ns_a, keep=1, actor=reviewer).pruned == [1]
    release_rollback(namespace=ns_a, release=release(ns_a, 1), actor=reviewer)
    build = release_build(namespace_id=ns_a.pk, now=BUILT_AT)
    serving_caches_clear()

    assert build.release.sequence == 1 and build.activated
    assert {name: (a.etag, a.content) for name, a in files(release(ns_a, 1)).items()} == stored
    assert len(chunks(files(release(ns_a, 1))["llms.txt"])) == 1  # today's cuts: a small file is one chunk
    served = client.get("/t/alpha/llms.txt")
    assert served["Evergreen-Release"] == "1" and served.content == stored["llms.txt"][1]


def test_a_pruned_release_whose_served_files_render_differently_stays_pruned(alpha: Namespace, reviewer: Any) -> None:
    Artifact.objects.filter(release=release(alpha, 1), name="llms.txt").update(etag='"not-what-it-renders"')
    rollback_to_pruned_first_release(alpha, reviewer)

    with pytest.raises(FilesRestoreError, match=r"Release #1 rendered again differs .*\(llms.txt\)"):
        release_build(namespace_id=alpha.pk, now=BUILT_AT)
    assert release(alpha, 1).files_pruned_at is not None
    assert not ArtifactPart.objects.filter(artifact__release=release(alpha, 1)).exists()


def test_prune_releases_command(alpha: Namespace, editor: Any) -> None:
    change(alpha, "Alpha ships every Wednesday now.")
    age_everything(alpha)
    admin = membership(UserFactory(username="ada"), alpha, Role.ADMIN)
    out = StringIO()

    call_command("prune_releases", "--namespace", "alpha", "--keep", "1", "--dry-run", stdout=out, stderr=StringIO())
    assert out.getvalue().startswith("would prune: alpha: pruned the files of 1 releases (#1)")
    assert not Release.objects.filter(files_pruned_at__isnull=False).exists()
    with pytest.raises(CommandError, match="--keep must be at least 1"):
        call_command("prune_releases", "--all", "--keep", "0")
    with pytest.raises(CommandError, match="You are not"):
        call_command("prune_releases", "--namespace", "alpha", "--keep", "1", "--user", editor.username)

    call_command("prune_releases", "--all", "--keep", "1", "--user", admin.username, stdout=out, stderr=StringIO())
    assert "alpha: pruned the files of 1 releases (#1)" in out.getvalue().splitlines()[-1]
    assert release(alpha, 1).files_pruned_at is not None


def large_release(namespace: Namespace, sequence: int, content: bytes) -> tuple[Release, int]:
    """A release row holding one large file, stored as a build stores it; and the bytes that stored anew."""
    row = Release.objects.create(
        namespace=namespace,
        sequence=sequence,
        knowledge_version=f"1.0.{sequence}",
        revision=BUILT_AT.date(),
        manifest_stored={"entries": [], "retired": []},
        inputs_hash=f"large-{sequence}",
        built_at=LONG_AGO,
    )
    return row, artifacts_store(release=row, artifacts=[RenderedArtifact("context.json", "application/json", content)])


def test_a_large_file_stores_only_the_chunks_a_change_touched_and_reads_back_whole_and_in_ranges(
    alpha: Namespace, reviewer: Any
) -> None:
    data = text(6 * CHUNK_MAX)
    middle = len(data) // 2
    edited = data[:middle] + b"one entry changed here " + data[middle:]
    first, stored_first = large_release(alpha, 10, data)
    second, stored_second = large_release(alpha, 11, edited)

    assert stored_first == len(data) and 0 < stored_second <= 2 * CHUNK_MAX < len(edited) // 2
    assert artifact_content(release_id=second.pk, name="context.json") == edited
    cuts = list(
        ArtifactPart.objects.filter(artifact__release=second).order_by("position").values_list("offset", flat=True)
    )
    assert len(cuts) > 6
    across = cuts[3]  # a range over a chunk boundary reads both sides
    streamed = artifact_stream(
        release_id=second.pk, name="context.json", start=across - 100, end=across + 99, slice_bytes=64
    )
    assert b"".join(streamed) == edited[across - 100 : across + 100]
    # Runs of small chunks are read a run per query, each slice within its bound.
    slices = list(
        artifact_stream(
            release_id=second.pk, name="context.json", start=5, end=len(edited) - 6, slice_bytes=3 * CHUNK_MAX
        )
    )
    assert b"".join(slices) == edited[5:-5] and all(len(s) <= 3 * CHUNK_MAX for s in slices) and len(slices) < len(cuts)

    age_everything(alpha)
    report = releases_prune(namespace=alpha, keep=1, actor=reviewer)
    assert first.sequence in report.pruned and second.sequence not in report.pruned
    assert 0 < report.bytes_freed <= 2 * CHUNK_MAX  # only the chunks no kept release shares
    assert artifact_content(release_id=second.pk, name="context.json") == edited
    with pytest.raises(Artifact.DoesNotExist):
        artifact_content(release_id=first.pk, name="context.json")


def new_bytes(release: Release) -> dict[str, int]:
    """Each file's bytes in chunks no earlier release of the namespace holds (what storing it added)."""
    earlier = ArtifactPart.objects.filter(
        artifact__release__namespace=release.namespace, artifact__release__sequence__lt=release.sequence
    ).values("blob")
    found: dict[str, int] = {}
    for part in ArtifactPart.objects.filter(artifact__release=release).exclude(blob__in=earlier).select_related("blob"):
        found[part.artifact.name] = found.get(part.artifact.name, 0) + part.blob.size
    return found


def realistic_rows(count: int) -> list[dict[str, Any]]:
    """Entries of the shared collections' text, as the bench's synthetic namespace imports them."""
    from bench.synthetic import build_namespace

    return [
        {
            "id": f"AL-{n:04d}",
            "category": "fact",
            "title": d.title or f"Entry {n}",
            "body": d.body,
            "updated": "2026-09-01",
        }
        for n, d in enumerate(build_namespace(count), start=1)
    ]


@pytest.mark.skipif(not (DATASETS / "cmrc2018").exists(), reason="shared datasets not present")
def test_a_one_entry_publish_stores_little_of_the_text_files_and_shares_most_of_the_index(ns_a: Namespace) -> None:
    """The bench's edit (issue 18 §4) on 300 entries of real text. Text files are cut into small chunks, so
    each stores about the chunks around the version and the entry; the index (format 2) stores the chunks
    around each touched term's postings. At 10,000 entries the whole release stores 5-8 % (README); at 300,
    with ~200 touched terms in posting arrays of ~100 KB, the index cannot share as much. Which chunks an edit
    touches is a draw of the cut points: context.json and llms-full.txt are bounded together (27 + 35 KB
    with FastCDC's cuts, 15 + 50 KB with the eight-byte window hash before it)."""
    rows = realistic_rows(300)
    publish(ns_a, rows, acknowledgement="The collections' text.")
    rows[150] = {**rows[150], "title": "Changed", "body": "Now about a zeppelin."}
    second = change_rows(ns_a, [rows[150]])

    stored, sizes = new_bytes(second), {a.name: a.size for a in files(second).values()}
    index, text = stored.pop(SEARCH_INDEX), sum(stored.values())
    assert stored[CONTEXT_JSON] + stored[LLMS_FULL_TXT] < 0.1 * (sizes[CONTEXT_JSON] + sizes[LLMS_FULL_TXT])
    assert text < 0.2 * (sum(sizes.values()) - sizes[SEARCH_INDEX])  # every file was stored whole before
    assert index < 0.7 * sizes[SEARCH_INDEX]


def test_a_build_cuts_its_large_files_again_from_the_last_ones_exactly_as_cutting_them_whole(
    ns_a: Namespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18 §3: a one-entry build cuts and hashes its large files only where they changed
    (knowledge.retrieval.chunk_reuse); each file's chunks are still exactly those of cutting it whole,
    each stored under its own content's digest, and the files read back as a full rebuild renders them."""
    from knowledge.retrieval.render import artifact
    from knowledge.services.releases import release_analysis_caches_clear
    from tests.knowledge.test_incremental_publish import assert_stored_as_a_full_rebuild

    monkeypatch.setattr(artifact, "SPOOL_ABOVE", 16 * 1024)  # files above this are spooled: cut again
    cut_again = release_storage.cut_again
    calls: list[int] = []

    def counted(data: bytes, *args: Any, **kwargs: Any) -> list[tuple[int, str]]:
        calls.append(len(data))
        return cut_again(data, *args, **kwargs)

    monkeypatch.setattr(release_storage, "cut_again", counted)
    release_analysis_caches_clear()
    rows = [
        {
            "id": f"AL-{n:04d}",
            "category": "fact",
            "title": f"Entry {n}",
            "body": text(700, seed=n).decode(errors="ignore"),
            "updated": "2026-09-01",
        }
        for n in range(1, 201)
    ]
    publish(ns_a, rows)
    assert not calls  # nothing kept yet: every file cut whole
    rows[120] = {**rows[120], "title": "Changed", "body": "Now about a zeppelin."}
    second = change_rows(ns_a, [rows[120]])

    assert {CONTEXT_JSON, SEARCH_INDEX} <= {name for name, a in files(second).items() if a.size > 16 * 1024}
    assert len(calls) >= 2
    for name, row in files(second).items():
        content = artifact_content(release_id=second.pk, name=name)
        whole = [
            (c.offset, c.digest) for c in release_storage._chunks(content, release_storage._sizes(name, len(content)))
        ]
        parts = row.parts.order_by("position").values_list("offset", "blob__digest")
        assert list(parts) == whole, name
    assert_stored_as_a_full_rebuild(ns_a)


def stored_cuts(release: Release) -> dict[str, list[tuple[int, str]]]:
    """Each file's parts as stored: (offset, digest)."""
    return {
        name: list(row.parts.order_by("position").values_list("offset", "blob__digest"))
        for name, row in files(release).items()
    }


def cut_with(release: Release, sizes: Callable[[str, int], ChunkSizes]) -> dict[str, list[tuple[int, str]]]:
    """Each file of `release` cut whole with sizes(name, its length)."""
    found = {}
    for name in files(release):
        content = artifact_content(release_id=release.pk, name=name)
        found[name] = [(c.offset, c.digest) for c in release_storage._chunks(content, sizes(name, len(content)))]
    return found


def test_large_files_are_cut_coarser_and_a_restarted_worker_keeps_the_last_releases_sizes(
    ns_a: Namespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18 §4: a file's chunks grow with it (chunks.sized_for; here at a few hundred kilobytes, the
    part rows made dearer). A process that kept no cuts (a restarted worker) reads the sizes the last
    release used from its parts and keeps them while they stay within a step of the best, so the next
    release shares that release's chunks rather than storing every large file again; two steps away it
    cuts with the best."""
    from knowledge.retrieval import chunks as chunking
    from knowledge.services.releases import release_analysis_caches_clear

    best = release_storage._sizes
    monkeypatch.setattr(chunking, "PART_ROW_BYTES", 64 * chunking.PART_ROW_BYTES)
    release_analysis_caches_clear()
    bodies = {n: text(700, seed=n).decode(errors="ignore") for n in range(1, 501)}
    rows = [{"id": f"AL-{n:04d}", "category": "fact", "title": f"Entry {n}", "body": b} for n, b in bodies.items()]
    first = release(publish(ns_a, rows), 1)
    assert stored_cuts(first) == cut_with(first, best)
    first_sizes = {name: best(name, row.size) for name, row in files(first).items()}
    assert first_sizes[CONTEXT_JSON].average >= 4 * FILE_CHUNKS.average

    release_analysis_caches_clear()  # a restarted worker: no cuts kept
    monkeypatch.setattr(chunking, "PART_ROW_BYTES", 4 * chunking.PART_ROW_BYTES)  # the best average doubles
    rows[120] = {**rows[120], "title": "Changed", "body": "Now about a zeppelin."}
    second = change_rows(ns_a, [rows[120]])
    assert stored_cuts(second) == cut_with(second, lambda name, _size: first_sizes[name])
    assert new_bytes(second)[CONTEXT_JSON] < 0.5 * files(second)[CONTEXT_JSON].size  # cut anew: all of it

    release_analysis_caches_clear()
    monkeypatch.setattr(chunking, "PART_ROW_BYTES", 165)  # context.json's best is its base again, two steps down
    rows[121] = {**rows[121], "title": "Changed too", "body": "Now about a balloon."}
    third = change_rows(ns_a, [rows[121]])
    assert stored_cuts(third) == cut_with(third, best)
    assert stored_cuts(third)[CONTEXT_JSON] != cut_with(third, lambda name, _size: first_sizes[name])[CONTEXT_JSON]


def test_storing_a_spooled_file_reads_it_mapped_and_lets_its_pages_go(
    ns_a: Namespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 18 §3: a build stores its spooled files without reading one whole (context.json, 114 MB at
    100,000 entries, read whole was a full build's peak): each is cut from its mapping, whose pages the
    process lets go as it cuts and stores them, and the files read back as a full rebuild renders them."""
    from knowledge.retrieval.render import artifact
    from knowledge.services import releases
    from tests.knowledge.test_incremental_publish import assert_stored_as_a_full_rebuild

    monkeypatch.setattr(artifact, "SPOOL_ABOVE", 16 * 1024)
    monkeypatch.setattr(release_storage, "RELEASE_BYTES", 16 * 1024)
    monkeypatch.setattr(release_storage, "BATCH_BYTES", 16 * 1024)
    storing, read_whole, let_go = [False], [], []
    content, store, drop = artifact.RenderedArtifact.content, releases.artifacts_store, release_storage._let_go

    def whole(self: RenderedArtifact) -> bytes:
        if storing[0] and self.spooled:
            read_whole.append(self.name)
        return content.fget(self)  # type: ignore[attr-defined]

    def stored(**kwargs: Any) -> int:
        storing[0] = True
        try:
            return store(**kwargs)
        finally:
            storing[0] = False

    def released(mapped: Any) -> None:
        let_go.append(type(mapped).__name__)
        drop(mapped)

    monkeypatch.setattr(artifact.RenderedArtifact, "content", property(whole))
    monkeypatch.setattr(releases, "artifacts_store", stored)
    monkeypatch.setattr(release_storage, "_let_go", released)
    rows = [
        {
            "id": f"AL-{n:04d}",
            "category": "fact",
            "title": f"Entry {n}",
            "body": text(700, seed=n).decode(errors="ignore"),
        }
        for n in range(1, 121)
    ]
    publish(ns_a, rows)

    assert read_whole == [] and "mmap" in let_go
    assert {CONTEXT_JSON, SEARCH_INDEX} <= {name for name, a in files(release(ns_a, 1)).items() if a.size > 16 * 1024}
    assert_stored_as_a_full_rebuild(ns_a)


def test_a_release_stores_its_manifest_as_a_delta_and_reads_it_back_whole(
    alpha: Namespace, monkeypatch: pytest.MonkeyPatch, django_assert_num_queries: Any
) -> None:
    """Issue 18 §4: a manifest is kept for every release for ever, so a publish stores only how it differs
    from the previous release's, and every CHAIN_MAX-th release stores it whole; each reads back whole in
    one query, the same as the manifest stored whole."""
    from knowledge.retrieval import manifests
    from knowledge.services import releases

    monkeypatch.setattr(releases, "CHAIN_MAX", 2)
    wholes = {1: release(alpha, 1).manifest}
    for sequence, body in ((2, "Alpha ships on Wednesdays."), (3, "Alpha ships on Thursdays."), (4, "Daily.")):
        wholes[sequence] = change(alpha, body).manifest

    stored = dict(Release.objects.filter(namespace=alpha).values_list("sequence", "manifest_stored"))
    assert [manifests.manifest_whole_at(stored[n]) for n in (1, 2, 3, 4)] == [None, 1, 1, None]
    assert [item["id"] for item in stored[3]["changed"]] == ["AL-001"] and "entries" not in stored[3]
    for sequence, whole in wholes.items():
        fresh = Release.objects.get(namespace=alpha, sequence=sequence)
        with django_assert_num_queries(1 if sequence in (2, 3) else 0):
            assert fresh.manifest == whole
        assert [item["version"] for item in whole["entries"] if item["id"] == "AL-001"] == [sequence]


def test_the_admin_shows_a_delta_stored_releases_manifest_whole(alpha: Namespace) -> None:
    """The release page shows the whole manifest as JSON, as it did when every release stored it whole."""
    from django.urls import reverse

    from tests.knowledge.test_evaluate import admin_client

    second = change(alpha, "Alpha ships on Wednesdays.")
    assert "entries" not in Release.objects.values_list("manifest_stored", flat=True).get(pk=second.pk)
    reviewer = membership(UserFactory(username="rita"), alpha, "reviewer")
    page = admin_client(reviewer).get(reverse("admin:knowledge_release_change", args=[second.pk]))
    assert page.status_code == 200
    assert escape(json.dumps(second.manifest, ensure_ascii=False)) in page.content.decode()
