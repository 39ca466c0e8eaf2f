"""A build writes its release's index and entry table for its host's web workers, which then only map them;
the table is the one a worker of another host makes from the stored files."""

from __future__ import annotations

import mmap
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from knowledge.models import Artifact, Entry, Namespace
from knowledge.retrieval.container import unpack_arrays
from knowledge.retrieval.contract.records import INTERNAL, PUBLIC
from knowledge.retrieval.entry_table import write_entry_table
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.render import artifact
from knowledge.retrieval.render.artifact import RenderedArtifact
from knowledge.retrieval.render.release import CONTEXT_JSON, SEARCH_INDEX, SITE_JSON, render_release
from knowledge.retrieval.snapshot import ReleaseStamp, Snapshot
from knowledge.retrieval.tiers import index_name, visible
from knowledge.selectors import serving
from knowledge.selectors.artifacts import artifact_contents
from knowledge.selectors.release_files import entries_file_name, index_file_name
from knowledge.selectors.serving import LoadedRelease, release_cache_key, release_read
from knowledge.services.entries import entry_retire
from knowledge.services.release_materialise import release_files_write, release_index_mapped
from tests.retrieval.helpers import demo_namespace, demo_records
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

pytestmark = pytest.mark.django_db

STAMP = ReleaseStamp(sequence=2, knowledge_version="1.2.0", revision="2026-09-02", generated_at="2026-09-02T10:52:47Z")


@pytest.fixture
def files(settings: Any, tmp_path: Path) -> Path:
    settings.EVERGREEN = replace(settings.EVERGREEN, release_files_dir=tmp_path / "files")
    return tmp_path / "files"


def varied(ns_a: Namespace, reviewer: Any) -> Namespace:
    """A release with what the public table must leave out or carry: an internal entry, a retired one,
    a valid-until date and links."""
    rows = alpha_rows()
    rows.append({**rows[0], "id": "AL-090", "title": "Alpha internals", "sensitivity": "internal"})
    rows.append({**rows[1], "id": "AL-091", "title": "Alpha until spring", "validUntil": "2027-03-01"})
    publish(ns_a, rows)
    entry_retire(entry=Entry.objects.get(public_id="AL-002"), actor=reviewer, reason="Merged into AL-091.")
    return publish(ns_a, [], now=BUILT_AT + timedelta(hours=1))


def stored(namespace: Namespace) -> tuple[dict[str, str], dict[str, bytes]]:
    release = namespace.active_release
    assert release is not None
    etags = dict(Artifact.objects.filter(release=release).values_list("name", "etag"))
    return etags, dict(artifact_contents(release_id=release.pk, names=[SITE_JSON, CONTEXT_JSON, SEARCH_INDEX]))


def read(namespace: Namespace) -> LoadedRelease:
    """The namespace's active release as a worker loads it (not cached)."""
    release = namespace.active_release
    assert release is not None
    return release_read(release_id=release.pk, key=release_cache_key(release), namespace_id=namespace.pk)


def storage_closed(monkeypatch: Any) -> None:
    """From now on a stored file read as a mapped file is made fails the test."""

    def never(**_: Any) -> None:
        raise AssertionError("read a mapped file from storage")

    monkeypatch.setattr(serving, "artifact_stream", never)


def test_the_build_writes_the_files_a_worker_of_another_host_makes_from_storage(
    files: Path, ns_a: Namespace, reviewer: Any, tmp_path: Path
) -> None:
    namespace = varied(ns_a, reviewer)
    etags, content = stored(namespace)

    index = files / index_file_name(etags[SEARCH_INDEX])
    table = files / entries_file_name(site_etag=etags[SITE_JSON], context_etag=etags[CONTEXT_JSON])
    # The copy the workers map holds the impacts the stored index (format 3) derives as it loads.
    assert index.read_bytes() == b"".join(SearchIndex.from_bytes(content[SEARCH_INDEX]).served_pieces())
    assert "post_bm25f" in unpack_arrays(index.read_bytes())[1]
    assert "post_bm25f" not in unpack_arrays(content[SEARCH_INDEX])[1]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / SITE_JSON).write_bytes(content[SITE_JSON])
    (elsewhere / CONTEXT_JSON).write_bytes(content[CONTEXT_JSON])
    write_entry_table(site_json=elsewhere / SITE_JSON, context_json=elsewhere / CONTEXT_JSON, table=elsewhere / "t")
    assert table.read_bytes() == (elsewhere / "t").read_bytes()
    assert [p.name for p in files.iterdir() if p.name.startswith(".") and p.name != ".lock"] == []  # no partials


def test_a_build_writes_its_hosts_copy_of_the_index_from_the_index_it_compiled(
    files: Path, ns_a: Namespace, monkeypatch: Any
) -> None:
    """Not from the stored bytes, whose rows it took apart and whose forward index it transposed again (the
    peak of a full build at 100,000 entries); the bytes a worker of another host makes from them."""

    def never(*_: Any) -> None:
        raise AssertionError("the host's copy was made from the stored bytes")

    monkeypatch.setattr(SearchIndex, "served_write", classmethod(never))
    rows = alpha_rows()
    publish(ns_a, rows)
    rows[0] = {**rows[0], "title": "Alpha, retitled"}
    namespace = publish(ns_a, rows, now=BUILT_AT + timedelta(hours=1))  # from the first build's caches
    etags, content = stored(namespace)
    made = (files / index_file_name(etags[SEARCH_INDEX])).read_bytes()
    assert made == b"".join(SearchIndex.from_bytes(content[SEARCH_INDEX]).served_pieces())


def test_a_worker_on_the_builds_host_maps_its_files_without_reading_them_from_storage(
    files: Path, ns_a: Namespace, reviewer: Any, monkeypatch: Any
) -> None:
    namespace = varied(ns_a, reviewer)
    storage_closed(monkeypatch)
    loaded = read(namespace)
    assert loaded.entry("AL-091") is not None and loaded.entry("AL-090") is None
    assert "AL-002" in loaded.tombstones


def test_a_worker_makes_the_files_the_build_could_not_write(
    files: Path, ns_a: Namespace, reviewer: Any, settings: Any
) -> None:
    files.parent.mkdir(exist_ok=True)
    files.write_bytes(b"not a directory")  # the build cannot write there: it builds and serves anyway
    namespace = varied(ns_a, reviewer)
    release = namespace.active_release
    assert release is not None

    files.unlink()
    loaded = release_read(release_id=release.pk, key=release_cache_key(release), namespace_id=namespace.pk)
    assert loaded.entry("AL-091") is not None
    assert sorted(p.suffix for p in files.iterdir() if not p.name.startswith(".")) == [".entries", ".index"]
    etags, content = stored(namespace)
    made = (files / index_file_name(etags[SEARCH_INDEX])).read_bytes()
    assert made == b"".join(SearchIndex.from_bytes(content[SEARCH_INDEX]).served_pieces())  # as the build writes it


def mapped(array: np.ndarray) -> bool:
    """Whether the array's memory is a file mapping's (its base chain ends at an mmap), not a private copy."""
    base: object = array
    while isinstance(base, np.ndarray | memoryview):
        base = base.base if isinstance(base, np.ndarray) else base.obj
    return isinstance(base, mmap.mmap)


def private(index: SearchIndex) -> set[str]:
    return {name for name, array in index._arrays.items() if not mapped(array)}


# Per term, derived as an index loads: small beside the postings. The host's copy holds the rest of
# what a worker derived (the offsets, and the string order: an argsort of every term).
DERIVED = {"term_idf"}
TOPICS = ("alpha internals", "pricing", "changelog", "")


def test_a_tier_index_is_mapped_from_the_hosts_file_as_the_public_one_and_answers_as_its_stored_bytes(
    files: Path, ns_a: Namespace, reviewer: Any, monkeypatch: Any
) -> None:
    namespace = varied(ns_a, reviewer)
    loaded = read(namespace)
    internal = loaded.cleared(INTERNAL)

    assert internal.index is not loaded.index and internal.entry("AL-090") is not None
    # Mapped as the public index is: all but the few per-term arrays a process derives as it loads.
    assert private(internal.index) == private(loaded.index) == DERIVED, sorted(private(internal.index))
    etags, _ = stored(namespace)
    name = index_name(INTERNAL)
    assert (files / index_file_name(etags[name])).is_file()
    (stored_bytes,) = (content for _, content in artifact_contents(release_id=loaded.release_id, names=[name]))
    from_storage = SearchIndex.from_bytes(stored_bytes)
    for topic in TOPICS:
        ranking, expected = internal.index.search(topic), from_storage.search(topic)
        assert (ranking.mode, ranking.total, list(ranking)) == (expected.mode, expected.total, list(expected))

    storage_closed(monkeypatch)  # another worker of the host only maps the file
    assert read(namespace).cleared(INTERNAL).entry("AL-090") is not None


def test_a_spooled_index_is_copied_for_the_workers_a_slice_at_a_time(files: Path, monkeypatch: Any) -> None:
    """At 100,000 entries reading the spooled index whole was the peak of this step (issue 18 §3)."""
    monkeypatch.setattr(artifact, "SPOOL_ABOVE", 0)
    snapshot = Snapshot(namespace=demo_namespace(), entries=demo_records())
    artifacts = render_release(snapshot, STAMP)
    index = next(a for a in artifacts if a.name == SEARCH_INDEX)
    served = b"".join(SearchIndex.from_bytes(index.content).served_pieces())
    content = RenderedArtifact.content

    def unless_the_index(self: RenderedArtifact) -> bytes:
        assert self.name != SEARCH_INDEX, "the index was read whole"
        return content.fget(self)  # type: ignore[attr-defined]

    monkeypatch.setattr(RenderedArtifact, "content", property(unless_the_index))
    release_files_write(public=visible(snapshot, PUBLIC), artifacts=artifacts)
    assert (files / index_file_name(index.etag)).read_bytes() == served


def test_the_build_checks_the_index_its_workers_will_map_and_the_stored_bytes_when_it_cannot_write_it(
    files: Path,
) -> None:
    """Loading the stored bytes copied the posting columns out of the rows and derived the impacts, for
    each check of the build (0.3 s and 200 MB at 100,000 entries); the host's copy holds both."""
    snapshot = Snapshot(namespace=demo_namespace(), entries=demo_records())
    index = next(a for a in render_release(snapshot, STAMP) if a.name == SEARCH_INDEX)
    from_storage = SearchIndex.from_bytes(index.content)

    checked = release_index_mapped(index)
    assert (files / index_file_name(index.etag)).read_bytes() == b"".join(from_storage.served_pieces())
    assert private(checked) == DERIVED, sorted(private(checked))
    files.rename(files.with_name("moved"))
    files.write_bytes(b"not a directory")
    fallen_back = release_index_mapped(index)
    assert {"post_docs", "post_bm25f"} <= private(fallen_back)
    for topic in TOPICS:
        for ranking in (checked.search(topic), fallen_back.search(topic)):
            expected = from_storage.search(topic)
            assert (ranking.mode, ranking.total, list(ranking)) == (expected.mode, expected.total, list(expected))
