"""Where release files live: contents shared between releases by hash, and the retention policy.

A release stores each file as a row (name, type, ETag) pointing at a blob of the namespace keyed by
the content's SHA-256, so a publish stores only the files it changed. The retention policy drops
the contents of old releases: never the active release, never one of the newest
EVERGREEN_RELEASE_KEEP, and never one still pinned (readable with `?release=`, by replay and by
citation checks: it served within EVERGREEN_RELEASE_RETENTION_DAYS, see knowledge.selectors.pinned).
The release's record, manifest and file list stay, so history, audit and rollback keep working: a
rollback to a pruned release renders its files again (releases are deterministic) before it serves.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import Artifact, ArtifactBlob, Namespace, Release
from knowledge.retrieval.render.release import RenderedArtifact
from knowledge.selectors.pinned import release_retained
from knowledge.services.audit import audit_record

RESTORED_DIFFERS = "Release #{sequence} rendered again differs from what it served ({names}); it stays pruned."


class FilesRestoreError(Exception):
    """A pruned release rendered again did not give back the bytes it served (ETags differ)."""


def _digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _blob_ids(*, namespace_id: int, files: list[RenderedArtifact]) -> dict[str, int]:
    """Blob id by digest for these files, creating the blobs the namespace does not hold yet."""
    digests = {_digest(f.content): f for f in files}
    known = dict(ArtifactBlob.objects.filter(namespace_id=namespace_id, digest__in=digests).values_list("digest", "pk"))
    new = [
        ArtifactBlob(namespace_id=namespace_id, digest=digest, content=f.content, size=len(f.content))
        for digest, f in digests.items()
        if digest not in known
    ]
    ArtifactBlob.objects.bulk_create(new)
    known.update({blob.digest: blob.pk for blob in new})
    return known


def artifacts_store(*, release: Release, artifacts: Iterable[RenderedArtifact]) -> None:
    """Attach the rendered files to a new release (in the build's transaction), storing new contents only."""
    files = list(artifacts)
    blobs = _blob_ids(namespace_id=release.namespace_id, files=files)
    Artifact.objects.bulk_create(
        Artifact(
            release=release,
            name=f.name,
            content_type=f.content_type,
            blob_id=blobs[_digest(f.content)],
            etag=f.etag,
            size=len(f.content),
        )
        for f in files
    )


def release_files_restore(*, release: Release, artifacts: Iterable[RenderedArtifact]) -> None:
    """Give a pruned release its files back from a new rendering, byte for byte (checked by ETag)."""
    files = {f.name: f for f in artifacts}
    rows = list(Artifact.objects.filter(release=release))
    differs = sorted(row.name for row in rows if row.name not in files or files[row.name].etag != row.etag)
    if differs or len(rows) != len(files):
        raise FilesRestoreError(RESTORED_DIFFERS.format(sequence=release.sequence, names=", ".join(differs)))
    blobs = _blob_ids(namespace_id=release.namespace_id, files=list(files.values()))
    for row in rows:
        Artifact.objects.filter(pk=row.pk).update(blob_id=blobs[_digest(files[row.name].content)])
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
        # The newest release's row first, as a build locks it: a build and a prune never interleave.
        releases = Release.objects.filter(namespace=namespace).only("pk", "sequence", "built_at", "files_pruned_at")
        if releases.select_for_update().order_by("-sequence").first() is None:
            return report
        active_id = Namespace.objects.values_list("active_release_id", flat=True).get(pk=namespace.pk)
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
        Artifact.objects.filter(release__in=doomed).update(blob=None)
        Release.objects.filter(pk__in=[r.pk for r in doomed]).update(files_pruned_at=now)
        orphans = ArtifactBlob.objects.filter(namespace=namespace, artifacts__isnull=True)
        report.bytes_freed = orphans.aggregate(total=Sum("size"))["total"] or 0
        report.blobs_deleted = ArtifactBlob.objects.filter(pk__in=list(orphans.values_list("pk", flat=True))).delete()[
            0
        ]
        audit_record(namespace=namespace, actor=actor, action="prune", note=report.describe())
    return report
