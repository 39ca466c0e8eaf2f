"""Where release files live: contents shared between releases by hash, and the retention policy.

A release stores each file as a row (name, type, ETag) with its parts: chunks of the namespace keyed
by their SHA-256. Every file is cut into content-defined chunks (knowledge.retrieval.chunks), so a
publish stores only the files it changed, and of a file only the chunks it changed. The retention policy drops
the contents of old releases: never the active release, never one of the newest
EVERGREEN_RELEASE_KEEP, and never one still pinned (readable with `?release=`, by replay and by
citation checks: it served within EVERGREEN_RELEASE_RETENTION_DAYS, see knowledge.selectors.pinned).
The release's record, manifest and file list stay, so history, audit and rollback keep working: a
rollback to a pruned release renders its files again (releases are deterministic) before it serves.
"""

from __future__ import annotations

import hashlib
import math
import mmap
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import Count, Sum
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import Artifact, ArtifactBlob, ArtifactPart, Namespace, Release
from knowledge.retrieval.chunk_reuse import RELEASE_BYTES, Cuts, cut_again
from knowledge.retrieval.chunks import (
    FILE_CHUNKS,
    INDEX_CHUNKS,
    ChunkSizes,
    chunk_ends,
    scaled_to,
    sized_for,
    sizes_kept,
)
from knowledge.retrieval.render.release import INDEX_NAMES, RenderedArtifact
from knowledge.selectors.pinned import release_retained
from knowledge.services.audit import audit_record

DIGESTS_PER_QUERY = 1000
BATCH_BYTES = 16 * 1024 * 1024  # new chunks are copied and inserted at most this many bytes at a time
PARTS_PER_INSERT = 2000
# About how many chunks of a file a one-entry publish changes (chunks.sized_for): a place in the posting
# list of each of the entry's terms in an index (160-240 chunks measured on the bench's namespaces of 10,000
# and 100,000 entries); in another file the entry's place and the header's.
INDEX_PLACES = 200
FILE_PLACES = 4
# The models' own tables (Meta.db_table is not set, so these are Django's names for them).
_KNOWN_BLOBS = (
    "SELECT digest, id FROM knowledge_artifactblob WHERE namespace_id = %s AND digest = ANY(string_to_array(%s, ','))"
)
_COPY_BLOBS = 'COPY knowledge_artifactblob ("namespace_id", "digest", "content", "size") FROM STDIN'
_COPY_PARTS = 'COPY knowledge_artifactpart ("artifact_id", "position", "offset", "blob_id") FROM STDIN'
RESTORED_DIFFERS = "Release #{sequence} rendered again differs from what it served ({names}); it stays pruned."


class FilesRestoreError(Exception):
    """A pruned release rendered again did not give back the bytes it served (ETags differ)."""


def _digest(content: bytes | memoryview) -> str:
    return hashlib.sha256(content).hexdigest()


class _Chunk(NamedTuple):  # a tuple: a hundred thousand are made per build at 100,000 entries
    offset: int
    digest: str
    data: memoryview


def _base(name: str) -> ChunkSizes:
    """Indexes are cut finer than other files (knowledge.retrieval.chunks.INDEX_CHUNKS)."""
    return INDEX_CHUNKS if name in INDEX_NAMES else FILE_CHUNKS


def _sizes(name: str, size: int) -> ChunkSizes:
    """The sizes a file of `size` bytes is best cut with (chunks.sized_for): large files coarser."""
    return sized_for(_base(name), size, places=INDEX_PLACES if name in INDEX_NAMES else FILE_PLACES)


def _sizes_before(*, release: Release) -> dict[str, ChunkSizes]:
    """The sizes the namespace's previous release cut its files with, told by their chunks' mean length
    (FastCDC's chunks average between `average` and 1.5 x `average`, chunks.ChunkSizes); files in fewer
    than two chunks, or pruned, tell nothing. For a process that kept no cuts (CutsKept) of the last build."""
    previous = (
        Release.objects.filter(namespace_id=release.namespace_id, sequence__lt=release.sequence)
        .order_by("-sequence")
        .values_list("pk", flat=True)
        .first()
    )
    if previous is None:
        return {}
    files = Artifact.objects.filter(release_id=previous).annotate(chunks=Count("parts"))
    found: dict[str, ChunkSizes] = {}
    for name, size, chunks in files.values_list("name", "size", "chunks"):
        base = _base(name)
        if chunks < 2 or size // chunks < base.average:
            continue
        found[name] = scaled_to(base, 1 << int(math.log2(size // chunks)))
    return found


def _chunks(content: bytes | mmap.mmap, sizes: ChunkSizes) -> list[_Chunk]:
    """The file's chunks: views of `content`, whose pages (a mapped file) are let go as it is cut."""
    found, offset, released = [], 0, 0
    view = memoryview(content)
    for end in chunk_ends(view, sizes):
        data = view[offset:end]
        found.append(_Chunk(offset=offset, digest=_digest(data), data=data))
        offset = end
        if offset - released > RELEASE_BYTES:
            _let_go(content)
            released = offset
    return found


def _let_go(content: bytes | mmap.mmap) -> None:
    """A mapped file's pages leave the process (the page cache keeps them): a file read once is never
    held whole (context.json, 114 MB at 100,000 entries, read whole was a full build's peak, issue 18 §3)."""
    if isinstance(content, mmap.mmap):
        content.madvise(mmap.MADV_DONTNEED)


class Kept(NamedTuple):
    """A large file as a build stored it: the spooled file, its chunks, and the sizes they were cut with."""

    artifact: RenderedArtifact
    cuts: Cuts
    sizes: ChunkSizes


class CutsKept:
    """The large files of the last release a process stored, with their chunks, so the next release's
    files are cut and hashed again only where they changed (knowledge.retrieval.chunk_reuse). The files
    are the build's spooled artifacts, kept on disk (not in memory) until the next build replaces them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[str, Kept] = {}

    def get(self, name: str) -> Kept | None:
        with self._lock:
            return self._files.get(name)

    def replace(self, files: dict[str, Kept]) -> None:
        with self._lock:
            self._files = files


def _chunks_kept(
    artifact: RenderedArtifact, content: bytes | mmap.mmap, held: Kept | None, before: ChunkSizes | None
) -> tuple[list[_Chunk], ChunkSizes]:
    """The artifact's chunks and their sizes: those the file was cut with last (`held`, else `before`)
    while they stay near the best (chunks.sizes_kept); cut again from the kept file of the same name
    when both are large and were cut alike."""
    sizes = sizes_kept(held.sizes if held is not None else before, _sizes(artifact.name, len(content)))
    if held is None or held.sizes != sizes or min(held.artifact.size, len(content)) <= sizes.maximum:
        return _chunks(content, sizes), sizes
    old = held.artifact.mapped()
    try:
        found = cut_again(content, sizes, old=old, cuts=held.cuts, digest=_digest)
    finally:
        if not isinstance(old, bytes):
            old.close()
    view, starts = memoryview(content), [0, *(end for end, _ in found[:-1])]
    return [_Chunk(a, d, view[a:end]) for a, (end, d) in zip(starts, found, strict=True)], sizes


def _batches(chunks: list[_Chunk]) -> Iterable[list[_Chunk]]:
    """The chunks in runs of at most BATCH_BYTES (or one larger chunk)."""
    batch: list[_Chunk] = []
    size = 0
    for chunk in chunks:
        if batch and size + len(chunk.data) > BATCH_BYTES:
            yield batch
            batch, size = [], 0
        batch.append(chunk)
        size += len(chunk.data)
    if batch:
        yield batch


def _known_blobs(*, namespace_id: int, digests: list[str]) -> dict[str, int]:
    """Blob id by digest, for the digests the namespace holds already. On PostgreSQL one query takes the
    digests as one comma-separated parameter (hex has no commas): an index's thousands of chunks as IN
    lists, or as an array quoted element by element, cost more to send than to look up."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_KNOWN_BLOBS, [namespace_id, ",".join(digests)])
            return dict(cursor.fetchall())
    known: dict[str, int] = {}
    for start in range(0, len(digests), DIGESTS_PER_QUERY):
        batch = digests[start : start + DIGESTS_PER_QUERY]
        known.update(
            ArtifactBlob.objects.filter(namespace_id=namespace_id, digest__in=batch).values_list("digest", "pk")
        )
    return known


def _parts_insert(rows: list[tuple[int, int, int, int]]) -> None:
    """Insert (artifact id, position, offset, blob id) parts: on PostgreSQL with COPY, as an index's
    thousands of parts take a tenth of the time of batched INSERTs of model objects."""
    if connection.vendor != "postgresql":
        ArtifactPart.objects.bulk_create(
            (ArtifactPart(artifact_id=a, position=p, offset=o, blob_id=b) for a, p, o, b in rows),
            batch_size=PARTS_PER_INSERT,
        )
        return
    with connection.cursor() as cursor, cursor.copy(_COPY_PARTS) as copy:
        for row in rows:
            copy.write_row(row)


def _blob_ids(
    *, namespace_id: int, chunks: Iterable[_Chunk], after_batch: Callable[[], None] = lambda: None
) -> tuple[dict[str, int], int]:
    """Blob id by digest for these chunks, creating those the namespace does not hold yet; and the
    bytes that took. New chunks are copied and written a batch at a time, `after_batch` called after
    each (a build never holds two copies of its files)."""
    wanted = {chunk.digest: chunk for chunk in chunks}
    digests = list(wanted)
    known = _known_blobs(namespace_id=namespace_id, digests=digests)
    new = [wanted[digest] for digest in digests if digest not in known]
    for run in _batches(new):
        known.update(_blobs_insert(namespace_id=namespace_id, chunks=run))
        after_batch()
    return known, sum(len(c.data) for c in new)


def _blobs_insert(*, namespace_id: int, chunks: list[_Chunk]) -> dict[str, int]:
    """Store new chunks; their ids by digest. On PostgreSQL with COPY (then one query for the ids): an
    INSERT quotes every byte of the chunks on the client."""
    if connection.vendor != "postgresql":
        blobs = [
            ArtifactBlob(namespace_id=namespace_id, digest=c.digest, content=bytes(c.data), size=len(c.data))
            for c in chunks
        ]
        ArtifactBlob.objects.bulk_create(blobs)
        return {blob.digest: blob.pk for blob in blobs}
    with connection.cursor() as cursor, cursor.copy(_COPY_BLOBS) as copy:
        for chunk in chunks:
            copy.write_row((namespace_id, chunk.digest, bytes(chunk.data), len(chunk.data)))
    return _known_blobs(namespace_id=namespace_id, digests=[chunk.digest for chunk in chunks])


def _parts_store(
    *,
    namespace_id: int,
    files: dict[int, RenderedArtifact],
    kept: CutsKept | None = None,
    before: Callable[[], dict[str, ChunkSizes]] = dict,
) -> int:
    """Give each artifact (by row id) its chunks; returns the bytes of chunks stored anew. One file is
    read and cut at a time, so a build holds at most its largest file's bytes (a spooled one is on disk).
    Indexes are cut finer than other files and large files coarser (_sizes). With `kept`, large files are
    cut again from the last ones kept there, which these then replace; a file kept nowhere keeps the
    sizes `before` gives (asked once, when first needed) while they stay near the best."""
    stored = 0
    keep: dict[str, Kept] = {}
    sizes_before: dict[str, ChunkSizes] | None = None
    for artifact_id, artifact in files.items():
        content = artifact.mapped()
        held = kept.get(artifact.name) if kept is not None else None
        if held is None and sizes_before is None and _sizes(artifact.name, len(content)) != _base(artifact.name):
            sizes_before = before()  # a file the base sizes do not fit may have been cut with others last
        chunks, sizes = _chunks_kept(artifact, content, held, (sizes_before or {}).get(artifact.name))
        if artifact.spooled:
            keep[artifact.name] = Kept(artifact, Cuts.of([(c.offset + len(c.data), c.digest) for c in chunks]), sizes)
        blobs, new = _blob_ids(namespace_id=namespace_id, chunks=chunks, after_batch=partial(_let_go, content))
        stored += new
        _parts_insert(
            [(artifact_id, position, chunk.offset, blobs[chunk.digest]) for position, chunk in enumerate(chunks)]
        )
        del chunks
    if kept is not None:
        kept.replace(keep)
    return stored


def artifacts_chunked(artifacts: Iterable[RenderedArtifact]) -> Iterator[tuple[RenderedArtifact, int]]:
    """Each artifact with the number of chunks storage cuts it into, one file read at a time (as storing
    does: bench.buildmem measures this step without a database)."""
    for artifact in artifacts:
        content = artifact.mapped()
        yield artifact, len(_chunks(content, _sizes(artifact.name, len(content))))


def artifacts_store(*, release: Release, artifacts: Iterable[RenderedArtifact], kept: CutsKept | None = None) -> int:
    """Attach the rendered files to a new release (in the build's transaction), storing new chunks only;
    returns the bytes stored anew. `kept`: the large files this process stored last (CutsKept)."""
    files = list(artifacts)
    rows = Artifact.objects.bulk_create(
        Artifact(release=release, name=f.name, content_type=f.content_type, etag=f.etag, size=f.size) for f in files
    )
    contents = {row.pk: f for row, f in zip(rows, files, strict=True)}
    before = partial(_sizes_before, release=release)
    return _parts_store(namespace_id=release.namespace_id, files=contents, kept=kept, before=before)


def release_files_restore(*, release: Release, artifacts: Iterable[RenderedArtifact]) -> None:
    """Give a pruned release its files back from a new rendering, byte for byte (checked by ETag).

    The indexes are the exception: they are never served, and their format follows the code
    (knowledge.retrieval.index_format), so a release stored in an older format gets its indexes in
    today's, which answer the same; their rows take the new ETags."""
    files = {f.name: f for f in artifacts}
    rows = list(Artifact.objects.filter(release=release))
    differs = sorted(row.name for row in rows if row.name not in files or files[row.name].etag != row.etag)
    if any(name not in INDEX_NAMES for name in differs) or len(rows) != len(files):
        raise FilesRestoreError(RESTORED_DIFFERS.format(sequence=release.sequence, names=", ".join(differs)))
    for row in rows:
        if row.name in differs:
            row.etag, row.size = files[row.name].etag, files[row.name].size
            row.save(update_fields=["etag", "size"])
    ArtifactPart.objects.filter(artifact__release=release).delete()
    _parts_store(namespace_id=release.namespace_id, files={row.pk: files[row.name] for row in rows})
    Release.objects.filter(pk=release.pk).update(files_pruned_at=None)


@dataclass
class PruneReport:
    namespace: str
    pruned: list[int] = field(default_factory=list)  # sequences whose files were dropped
    kept: int = 0  # releases that keep their files
    blobs_deleted: int = 0
    bytes_freed: int = 0

    def describe(self) -> str:
        if not self.pruned:
            return f"{self.namespace}: nothing to prune ({self.kept} releases keep their files)"
        sequences = ", ".join(f"#{n}" for n in self.pruned)
        return (
            f"{self.namespace}: pruned the files of {len(self.pruned)} releases ({sequences}); "
            f"{self.blobs_deleted} contents, {self.bytes_freed} bytes freed; {self.kept} releases keep their files"
        )


def releases_prune(
    *, namespace: Namespace, keep: int, actor: Actor, dry_run: bool = False, now: datetime | None = None
) -> PruneReport:
    """Drop the file contents of the namespace's releases outside the retention policy (see the module)."""
    now = now or timezone.now()
    report = PruneReport(namespace=namespace.slug)
    with transaction.atomic():
        # The newest release's row first, as a build and a rollback lock it: neither interleaves with a
        # prune. Then the namespace row, as they do: no release becomes active while the prune decides
        # (the active release keeps its files). `no_key`: foreign-key checks on rows that refer to them
        # (FOR KEY SHARE, at commit) pass, so an activation holding the namespace row never deadlocks a prune.
        releases = Release.objects.filter(namespace=namespace).only("pk", "sequence", "built_at", "files_pruned_at")
        if releases.select_for_update(no_key=True).order_by("-sequence").first() is None:
            return report
        locked = Namespace.objects.select_for_update(no_key=True).only("pk", "active_release_id")
        active_id = locked.get(pk=namespace.pk).active_release_id
        newest = set(releases.order_by("-sequence").values_list("pk", flat=True)[: max(keep, 1)])
        with_files = list(releases.filter(files_pruned_at__isnull=True).order_by("sequence"))
        doomed = [
            r
            for r in with_files
            if r.pk not in newest and r.pk != active_id and not release_retained(release=r, active_id=active_id)
        ]
        report.pruned = [r.sequence for r in doomed]
        report.kept = len(with_files) - len(doomed)
        if dry_run or not doomed:
            return report
        # Chunks shared with a kept release keep a part that refers to them, so they are no orphans.
        ArtifactPart.objects.filter(artifact__release__in=doomed).delete()
        Release.objects.filter(pk__in=[r.pk for r in doomed]).update(files_pruned_at=now)
        orphans = ArtifactBlob.objects.filter(namespace=namespace, parts__isnull=True)
        report.bytes_freed = orphans.aggregate(total=Sum("size"))["total"] or 0
        report.blobs_deleted = ArtifactBlob.objects.filter(pk__in=list(orphans.values_list("pk", flat=True))).delete()[
            0
        ]
        audit_record(namespace=namespace, actor=actor, action="prune", note=report.describe())
    return report
