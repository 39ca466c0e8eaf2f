"""Building and activating releases (rolling back is knowledge.services.rollback).

A build reads a snapshot, renders every artifact, validates them and commits the release and the
active-release switch in one transaction: a failed or killed build leaves the previous release
serving. Builds are idempotent (a snapshot with a known inputs hash reuses that release) and bursts
of publishes coalesce into one build.

Builds are incremental: each index patches the last release's, mapped from its stored file (so a
worker's first build patches too), with the reference statistics its manifest records
(knowledge.retrieval.patching). Within a process (a Celery worker's child) the analysed terms of a
namespace's last build are kept (render.release.AnalysisCache) and only changed entries are analysed
again; a process's first build of a namespace starts from the caches the last build on the host kept
on disk (knowledge.services.build_cache). The release is byte-identical to a full build against the
same reference statistics.
"""

from __future__ import annotations

import logging
import mmap
import re
import threading
import time
from collections import OrderedDict
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any

import orjson
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.models import ActivationKind, BuildStatus, Namespace, Release, ReleaseBuild
from knowledge.retrieval.calibration import Lineage
from knowledge.retrieval.contract.records import PUBLIC
from knowledge.retrieval.entry_table import TableReuse
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.leaks import leak_check, public_texts
from knowledge.retrieval.manifests import CHAIN_MAX, DELTA, WHOLE_AT, manifest_delta, manifest_whole_at
from knowledge.retrieval.render.release import (
    CONTEXT_JSON,
    SEARCH_INDEX,
    AnalysisCache,
    PartsCache,
    RenderedArtifact,
    index_references,
    references_from,
    render_release,
)
from knowledge.retrieval.semver import bump_knowledge_version
from knowledge.retrieval.snapshot import EntryDigests, EntryRecord, KeptByRecord, ReleaseStamp, Snapshot
from knowledge.retrieval.tiers import INTERNAL_ARTIFACTS, freshness_counts, packable, visible
from knowledge.retrieval.timestamps import rfc3339
from knowledge.selectors.calibration import calibration_lineage, recorded_lineage
from knowledge.selectors.pages import release_metrics_measure
from knowledge.selectors.release_indexes import release_indexes_mapped
from knowledge.selectors.release_notices import release_switch_announce
from knowledge.selectors.snapshots import RecordKey, snapshot_read
from knowledge.services.actors import system_actor
from knowledge.services.audit import audit_record
from knowledge.services.build_cache import build_cache_bases_clear, build_cache_load, build_cache_save
from knowledge.services.build_queue import (
    build_pending_key_clear,
    build_requests_ask_rollback,
    build_requests_satisfy,
)
from knowledge.services.heap import heap_frozen, heap_trim, heap_unmapped
from knowledge.services.layers import layers_rebuild_dependants
from knowledge.services.layers_withdrawn import withdrawn_entries_record
from knowledge.services.release_gate import (
    candidate_from_artifacts,
    existing_release_check,
    release_gate_check,
    release_gate_record,
)
from knowledge.services.release_materialise import release_files_write, release_index_mapped, release_index_served
from knowledge.services.release_storage import CutsKept, artifacts_store, release_files_restore
from knowledge.services.webhooks import release_activation_record

logger = logging.getLogger(__name__)

LZ4_SINCE = 140000  # PostgreSQL 14 added lz4 TOAST compression
ANALYSIS_CACHES_MAX = 8  # namespaces whose last build's analysis a process keeps (LRU)


@dataclass(frozen=True, slots=True)
class _BuildCaches:
    """What a process keeps of a namespace's last build: entry records, analysed terms, rendered parts,
    where its entry table's records are, the records' digests, the chunks of the files it stored."""

    analysis: AnalysisCache
    parts: PartsCache
    table: TableReuse = field(default_factory=TableReuse)
    records: dict[RecordKey, EntryRecord] = field(default_factory=dict)
    # The last release built here: its id -> its manifest as stored, whole, and its entries' hashes by ID.
    manifests: dict[int, tuple[Any, Any, dict[str, str]]] = field(default_factory=dict)
    digests: EntryDigests = field(default_factory=EntryDigests)  # of the records, for the inputs hash
    # The manifest's item of each record: an unchanged entry's is the very object the last manifest
    # holds, so the delta against it finds the changed items by identity (manifests.manifest_delta).
    items: KeptByRecord[dict[str, Any]] = field(default_factory=lambda: KeptByRecord(_manifest_item))
    cuts: CutsKept = field(default_factory=CutsKept)  # the large files it stored, cut into chunks
    reading: threading.Lock = field(default_factory=threading.Lock)


_analysis_caches: OrderedDict[int, _BuildCaches] = OrderedDict()
_analysis_lock = threading.Lock()


def _build_caches(namespace_id: int) -> _BuildCaches:
    """This process's caches of the namespace (the least recently built are dropped); a process's
    first for a namespace starts from what the last build on this host kept on disk, if anything."""
    with _analysis_lock:
        caches = _analysis_caches.pop(namespace_id, None)
        if caches is None:
            caches = _BuildCaches(AnalysisCache(), PartsCache())
            with caches.reading:
                build_cache_load(
                    namespace_id=namespace_id, records=caches.records, analysis=caches.analysis, parts=caches.parts
                )
        _analysis_caches[namespace_id] = caches
        while len(_analysis_caches) > ANALYSIS_CACHES_MAX:
            _analysis_caches.popitem(last=False)
        return caches


def _build_caches_keep(namespace_id: int) -> None:
    """Keep the namespace's caches on disk, for this worker's next life (knowledge.services.build_cache)."""
    caches = _build_caches(namespace_id)
    heap_trim()  # the build's freed heap pages back first, so the save's own do not sit on top of them
    with caches.reading:
        build_cache_save(
            namespace_id=namespace_id, records=caches.records, analysis=caches.analysis, parts=caches.parts
        )


def _snapshot(namespace: Namespace, now: datetime) -> Snapshot:
    """The namespace's publishable state, reading in full only the entry versions not read before."""
    caches = _build_caches(namespace.pk)
    with caches.reading:
        return snapshot_read(namespace=namespace, today=now.astimezone(UTC).date(), kept=caches.records)


def _render(
    namespace: Namespace,
    snapshot: Snapshot,
    stamp: ReleaseStamp,
    *,
    follows: Release | None,
    lineage: Lineage | None,
) -> list[RenderedArtifact]:
    """The release's files; its indexes keep the reference statistics of `follows`' unless they drifted
    and patch its indexes (mapped from its stored files, so no process cache is needed) when they can,
    and its public index keeps the calibration of `lineage` while it holds (calibration.carried)."""
    caches = _build_caches(namespace.pk)
    references = references_from(follows.manifest) if follows is not None else None
    previous = release_indexes_mapped(release=follows) if follows is not None else None
    artifacts = render_release(
        snapshot,
        stamp,
        analysis=caches.analysis,
        parts=caches.parts,
        references=references,
        lineage=lineage,
        previous=previous,
        served=release_index_served,
    )
    logger.info(
        "Release of %s: %d entries analysed, %d reused; %d parts rendered, %d reused",
        namespace.slug,
        caches.analysis.analysed,
        caches.analysis.reused,
        caches.parts.rendered,
        caches.parts.reused,
    )
    return artifacts


def _latest_release(namespace: Namespace) -> Release | None:
    """The namespace's newest release, its manifest from this process's last build when that built it
    (parsing the manifest's JSON costs a tenth of a second per 10,000 entries), else from the database."""
    latest = Release.objects.filter(namespace=namespace).defer("manifest_stored").order_by("-sequence").first()
    if latest is None:
        return None
    kept = _build_caches(namespace.pk).manifests.get(latest.pk)
    if kept is not None:
        latest.manifest_known(stored=kept[0], whole=kept[1], hashes=kept[2])
    return latest


def _manifest_stored(previous: Release | None, manifest: dict[str, Any]) -> Any:
    """What a new release stores of its manifest: its delta against `previous`'s while the chain of deltas
    stays short and the delta small (knowledge.retrieval.manifests), else the whole manifest."""
    if previous is None or not isinstance(previous.manifest, dict):
        return manifest  # the first release, or one stored before manifests were mappings
    whole_at = manifest_whole_at(previous.manifest_stored)
    if whole_at is not None and previous.sequence - whole_at >= CHAIN_MAX:
        return manifest
    delta = manifest_delta(previous.manifest, manifest)
    if delta is None:
        return manifest
    return {DELTA: previous.sequence, WHOLE_AT: previous.sequence if whole_at is None else whole_at, **delta}


def _manifest_keep(namespace: Namespace, release: Release, hashes: dict[str, str]) -> None:
    """Keep the manifest as the database gives it back (JSON: tuples read back as lists), for the next
    build, and let the release hold that copy too, so the build's own can go. One copy when the release
    stores its manifest whole (two were kept: 43 MB each at 100,000 entries). Its entries are kept as
    built: plain dictionaries of strings and numbers, which a JSON round trip gives back equal (it took
    0.07 s a build at 100,000 entries). `hashes`: its entries' content hashes by ID."""
    _build_caches(namespace.pk).manifests.clear()
    stored = orjson.loads(orjson.dumps(release.manifest_stored))
    if release.manifest_stored is release.manifest:
        whole = stored
    else:
        rest = {key: value for key, value in release.manifest.items() if key != "entries"}
        whole = {"entries": release.manifest["entries"], **orjson.loads(orjson.dumps(rest))}
    _build_caches(namespace.pk).manifests[release.pk] = (stored, whole, hashes)
    release.manifest_known(stored=stored, whole=whole, hashes=hashes)


def release_analysis_caches_clear() -> None:
    """Forget every namespace's analysed terms: the next builds in this process are full ones."""
    with _analysis_lock:
        _analysis_caches.clear()
    build_cache_bases_clear()  # and which cache files on disk it wrote: as after a restart


class ReleaseValidationError(Exception):
    """A rendered release failed its own checks; it is never activated."""


class ConcurrentBuildError(Exception):
    """Another build committed a release of this namespace meanwhile; retry."""


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    release: Release
    created: bool
    activated: bool
    held: bool = False  # built, and held by the golden questions (knowledge.services.release_gate)

    def describe(self) -> str:
        """What the build did, in words (build_release prints it)."""
        if self.held:
            return "built and held by the golden questions; the serving release stays active"
        if self.created:
            return "built and activated" if self.activated else "built; a release of newer content stays active"
        if self.activated:
            return "activated again (the published versions are the ones it was built from)"
        return "unchanged"


def _manifest(
    snapshot: Snapshot, artifacts: list[RenderedArtifact], items: KeptByRecord[dict[str, Any]]
) -> dict[str, Any]:
    """The release's manifest; `items`: the namespace's last manifest items (shared, so never changed)."""
    return {
        "entries": items.of(snapshot.entries),
        "retired": [t.id for t in snapshot.tombstones],
        "index": index_references(artifacts),
    }


def _manifest_item(entry: EntryRecord) -> dict[str, Any]:
    item: dict[str, Any] = {"id": entry.id, "version": entry.version, "hash": entry.content_hash}
    if entry.sensitivity != PUBLIC:  # the change feed leaves these out for callers not cleared for them
        item["sensitivity"] = entry.sensitivity
    if entry.layer:  # once the namespace has bases: which IDs a base's removal withdraws (layers_withdrawn)
        item["layer"] = entry.layer
    return item


def _stamp(*, namespace: Namespace, hashes: dict[str, str], previous: Release | None, now: datetime) -> ReleaseStamp:
    """The new release's stamp; `hashes`: its snapshot's entries' content hashes by ID."""
    if previous is None:
        version = namespace.knowledge_version
        sequence = 1
    else:
        version = bump_knowledge_version(previous.knowledge_version, before=previous.manifest_hashes(), after=hashes)
        sequence = previous.sequence + 1
    now = now.astimezone(UTC).replace(microsecond=0)
    return ReleaseStamp(
        sequence=sequence,
        knowledge_version=version,
        revision=now.date().isoformat(),
        generated_at=rfc3339(now),
    )


LEAKED = "The leak check failed: text of non-public entries is in public files. {leaks}"


# An entry object of context.json opens with its id then its category (the contract's field order); the
# categories and tombstones that also open with an id go on with other fields. Unescaped quotes never occur
# inside a JSON string, so this finds exactly the entries, without parsing 100 MB into objects.
_ENTRY_OPENING = re.compile(rb'\{"id":"([^"\\]*)","category":')


CONTEXT_SCAN_BYTES = 8 * 1024 * 1024  # context.json mapped is read this much at a time (plus the overlap)
CONTEXT_SCAN_OVERLAP = 64 * 1024  # longer than any entry opening, so one that starts in a window ends in it


def _context_ids(context_json: bytes | mmap.mmap) -> list[str]:
    """The IDs of context.json's entries, in order. A mapped file is read a window at a time and its pages
    let go after each: scanned whole, all of its pages stayed resident (127 MB at 100,000 entries, the
    worker's peak after the patch). An opening longer than the overlap is not found, so the check fails."""
    if isinstance(context_json, bytes):
        return [found.decode() for found in _ENTRY_OPENING.findall(context_json)]
    ids: list[str] = []
    size = len(context_json)
    for start in range(0, size, CONTEXT_SCAN_BYTES):
        window = context_json[start : min(start + CONTEXT_SCAN_BYTES + CONTEXT_SCAN_OVERLAP, size)]
        for found in _ENTRY_OPENING.finditer(window):
            if found.start() >= CONTEXT_SCAN_BYTES:
                break  # the next window's
            ids.append(found[1].decode())
        context_json.madvise(mmap.MADV_DONTNEED)
    return ids


def release_validate(
    snapshot: Snapshot, stamp: ReleaseStamp, artifacts: list[RenderedArtifact], *, index: SearchIndex
) -> None:
    """Refuse a release whose files do not hold exactly the snapshot's public entries, or leak a hidden
    one; `index`: its public index as loaded (release_materialise.release_index_mapped)."""
    by_name = {artifact.name: artifact for artifact in artifacts}
    public = visible(snapshot, PUBLIC)
    context = by_name[CONTEXT_JSON].mapped()  # a fresh read copied 120 MB at 100,000 entries
    try:
        listed = _context_ids(context)
    finally:
        if not isinstance(context, bytes):
            context.close()
    if listed != [e.id for e in public.entries]:
        raise ReleaseValidationError("context.json does not list exactly the snapshot's public entries.")
    browse = index.search("")
    if browse.total != len(packable(public.entries, revision=stamp.revision)):
        raise ReleaseValidationError("The compiled index does not hold every public entry that may be packed.")
    hidden = [e for e in snapshot.entries if e.sensitivity != PUBLIC]
    if not hidden:
        return
    served = {a.name: a.content for a in artifacts if a.name not in INTERNAL_ARTIFACTS}
    leaks = leak_check(served, hidden=hidden, public=public_texts(public))
    if leaks:
        raise ReleaseValidationError(LEAKED.format(leaks="; ".join(leak.describe() for leak in leaks)))


def _compress_artifacts_with_lz4() -> None:
    """Store this transaction's artifacts (and the release's manifest) compressed with lz4 instead of
    PostgreSQL's default pglz.

    pglz is slow: it took about 1 s of a 10,000-entry release's ~47 MB of artifacts, lz4 a third of
    that for about the same size, and web workers decompress them faster when they load the release.
    The manifest, 11 MB of JSON at 100,000 entries, took 0.28 s with pglz and 0.12 s with lz4.
    Values already stored keep their compression; a server without lz4 keeps pglz.
    """
    if connection.vendor != "postgresql" or getattr(connection, "pg_version", 0) < LZ4_SINCE:
        return
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL default_toast_compression = 'lz4'")
    except DatabaseError as error:
        logger.info("Artifacts stay compressed with pglz: %s", error)


def release_activate(
    *, namespace_id: int, release: Release, serial: int, kind: str = ActivationKind.BUILD, now: datetime | None = None
) -> bool:
    """Serve the release for content serial `serial`, unless it already serves or newer content does.

    Runs inside the caller's transaction; every switch is recorded (release_activation_record), so the
    change feed and webhooks see rollbacks and re-activations as well as new builds.
    """
    namespace = Namespace.objects.select_for_update().get(pk=namespace_id)
    if namespace.active_release_id == release.pk:
        if serial > namespace.active_serial:
            Namespace.objects.filter(pk=namespace_id).update(active_serial=serial)
        return False
    if namespace.active_serial > serial:
        return False
    previous = namespace.active_release_id
    namespace.active_release = release
    namespace.active_serial = serial
    namespace.save(update_fields=["active_release", "active_serial"])
    release_activation_record(namespace_id=namespace_id, release=release, previous_id=previous, kind=kind, at=now)
    # Issue 16 §1: the namespaces built on this one take the change in their next build, whatever switched
    # (a build, a rollback, a held release let through), recorded in this transaction like the switch.
    layers_rebuild_dependants(namespace_id=namespace_id)
    transaction.on_commit(partial(release_switch_announce, namespace_id))  # web workers switch at once
    return True


def release_build(
    *, namespace_id: int, task_id: str = "", now: datetime | None = None, actor: Actor = None
) -> BuildOutcome:
    """Build (or reuse) the release of the namespace's current published content and activate it,
    unless its golden questions regress (then it is built and held: `outcome.held`).

    The audit trail records `actor`, or the system actor for builds nobody asked for in person (Celery).
    """
    build_pending_key_clear(namespace_id)
    namespace = Namespace.objects.get(pk=namespace_id)
    build = ReleaseBuild.objects.create(namespace=namespace, task_id=task_id, status=BuildStatus.RUNNING)
    try:
        # The process's caches left out of the collector's passes; the build's arrays taken from the heap
        # (heap.heap_unmapped) when it follows a release and this process holds the namespace's caches: at
        # 100,000 entries a full build peaked 59 MiB higher so, and a fresh worker's first build also reads
        # its caches back, whose objects would sit between the arrays' pages in the heap.
        incremental = namespace.pk in _analysis_caches and Release.objects.filter(namespace=namespace).exists()
        with heap_frozen(), heap_unmapped() if incremental else nullcontext():
            outcome = _build(namespace=namespace, now=now or timezone.now(), actor=actor or system_actor())
    except Exception as error:
        ReleaseBuild.objects.filter(pk=build.pk).update(
            status=BuildStatus.FAILED, finished_at=timezone.now(), error=f"{type(error).__name__}: {error}"
        )
        raise
    status = BuildStatus.SUCCEEDED if outcome.created or outcome.activated else BuildStatus.UNCHANGED
    status = BuildStatus.HELD if outcome.held else status
    ReleaseBuild.objects.filter(pk=build.pk).update(status=status, release=outcome.release, finished_at=timezone.now())
    ReleaseBuild.objects.filter(namespace=namespace, status=BuildStatus.RUNNING, pk__lt=build.pk).update(
        status=BuildStatus.ABANDONED, finished_at=timezone.now()
    )
    return outcome


def _serve(*, namespace: Namespace, release: Release, serial: int, now: datetime) -> bool:
    """Activate the build's release (inside its transaction) and mark the requests it satisfies."""
    rollback = build_requests_ask_rollback(namespace_id=namespace.pk, serial=serial)
    kind = ActivationKind.ROLLBACK if rollback else ActivationKind.BUILD
    activated = release_activate(namespace_id=namespace.pk, release=release, serial=serial, kind=kind, now=now)
    build_requests_satisfy(namespace_id=namespace.pk, serial=serial, release=release, now=now)
    return activated


def _files_render_again(*, namespace: Namespace, release: Release, snapshot: Snapshot) -> None:
    """A pruned release is wanted again (a rollback, content back as it was): render its files anew."""
    stamp = ReleaseStamp(
        sequence=release.sequence,
        knowledge_version=release.knowledge_version,
        revision=release.revision.isoformat(),
        generated_at=rfc3339(release.built_at.astimezone(UTC)),
    )
    # The release's own calibration record, as it was: its files come out as they were.
    artifacts = _render(namespace, snapshot, stamp, follows=release, lineage=recorded_lineage(release))
    with transaction.atomic():
        Release.objects.select_for_update().filter(namespace=namespace).order_by("-sequence").first()  # as a prune
        _compress_artifacts_with_lz4()
        release_files_restore(release=release, artifacts=artifacts)
    logger.info("Rendered the pruned files of release %s of %s again", release.sequence, namespace.slug)


def _serve_unless_held(*, namespace: Namespace, release: Release, held: bool, serial: int, now: datetime) -> bool:
    """Serve the release unless the golden questions hold it; a held release still answers the build
    requests up to `serial` (it was built; serving it is a reviewer's decision now, not another build's)."""
    if not held:
        return _serve(namespace=namespace, release=release, serial=serial, now=now)
    build_requests_satisfy(namespace_id=namespace.pk, serial=serial, release=release, now=now)
    return False


def _serve_again(
    *, namespace: Namespace, release: Release, snapshot: Snapshot, serial: int, now: datetime, actor: Actor
) -> BuildOutcome:
    """The published versions are the ones `release` was built from: serve it again, no new build."""
    if release.files_pruned_at is not None:
        _files_render_again(namespace=namespace, release=release, snapshot=snapshot)
    check = existing_release_check(namespace=namespace, release=release)
    with transaction.atomic():
        if check is not None:
            release_gate_record(release=release, check=check, now=now)
        held = check is not None and check.held
        activated = _serve_unless_held(namespace=namespace, release=release, held=held, serial=serial, now=now)
        if activated:
            audit_record(
                namespace=namespace,
                actor=actor,
                action="release",
                release=release,
                note=f"Release #{release.sequence} v{release.knowledge_version} activated again "
                "(the published versions are the ones it was built from).",
            )
    return BuildOutcome(release=release, created=False, activated=activated, held=held)


def _served_again(namespace: Namespace, release: Release, *, latest: Release | None, serial: int) -> bool:
    """Whether a build of `release`'s inputs serves it rather than a new release: when it is the newest
    release, the one serving, or the one a pending rollback asked for (its files pruned, so rendered again).
    Content that merely came back to an earlier state (an entry restored, a setting changed back) gets a new
    release: serving the old one again took knowledgeVersion back down (2.0.0 -> 1.3.1), and an agent that
    compares versions would think it held newer knowledge than the server."""
    if latest is None or release.pk in (latest.pk, namespace.active_release_id):
        return True
    return build_requests_ask_rollback(namespace_id=namespace.pk, serial=serial)


def _build(*, namespace: Namespace, now: datetime, actor: Actor) -> BuildOutcome:
    started = time.monotonic()
    serial = namespace.content_serial
    previous = _latest_release(namespace)
    # The IDs the last release served from a base that has left the list answer 410 from now on (seed §6),
    # before the inputs hash: a release of the same content that still answered 404 for them is not reused.
    snapshot = withdrawn_entries_record(
        namespace=namespace, snapshot=_snapshot(namespace, now), previous=previous, now=now
    )
    inputs_hash = snapshot.inputs_hash(_build_caches(namespace.pk).digests)
    existing = Release.objects.filter(namespace=namespace, inputs_hash=inputs_hash).order_by("-sequence").first()
    if existing is not None and _served_again(namespace, existing, latest=previous, serial=serial):
        return _serve_again(
            namespace=namespace, release=existing, snapshot=snapshot, serial=serial, now=now, actor=actor
        )

    hashes = {entry.id: entry.content_hash for entry in snapshot.entries}
    stamp = _stamp(namespace=namespace, hashes=hashes, previous=previous, now=now)
    lineage = calibration_lineage(namespace=namespace, snapshot=snapshot, latest=previous, hashes=hashes)
    artifacts = _render(namespace, snapshot, stamp, follows=previous, lineage=lineage)
    index = release_index_mapped(next(a for a in artifacts if a.name == SEARCH_INDEX))
    release_validate(snapshot, stamp, artifacts, index=index)
    public = visible(snapshot, PUBLIC)
    metrics = release_metrics_measure(public, stamp, artifacts, index=index)
    metrics["freshness"] = freshness_counts(public.entries, revision=stamp.revision)
    check = release_gate_check(namespace=namespace, candidate=partial(candidate_from_artifacts, artifacts, index=index))
    # Before the switch: this host's workers only map them.
    release_files_write(public=public, artifacts=artifacts, reuse=_build_caches(namespace.pk).table)
    pause = settings.EVERGREEN.build_pause_seconds
    if pause:
        time.sleep(pause)

    with transaction.atomic():
        # Only the row's lock and id: its manifest and metrics are megabytes of JSON at scale.
        locked = Release.objects.select_for_update().filter(namespace=namespace).only("pk")
        latest = locked.order_by("-sequence").first()
        if (latest.pk if latest else None) != (previous.pk if previous else None):
            raise ConcurrentBuildError(f"Namespace {namespace.slug} got release {latest} meanwhile.")
        _compress_artifacts_with_lz4()  # the manifest too, when stored whole: 11 MB of JSON at 100,000 entries
        manifest = _manifest(snapshot, artifacts, _build_caches(namespace.pk).items)
        stored = _manifest_stored(previous, manifest)
        release = Release.objects.create(
            namespace=namespace,
            sequence=stamp.sequence,
            knowledge_version=stamp.knowledge_version,
            revision=stamp.revision,
            manifest_stored=stored,
            inputs_hash=inputs_hash,
            content_serial=serial,
            built_at=datetime.fromisoformat(stamp.generated_at.replace("Z", "+00:00")),
            build_seconds=round(time.monotonic() - started, 3),
            entry_count=len(snapshot.entries),
            total_tokens=snapshot.total_tokens,
            metrics=metrics,
        )
        release.manifest_known(stored=stored, whole=manifest)
        stored_bytes = artifacts_store(release=release, artifacts=artifacts, kept=_build_caches(namespace.pk).cuts)
        release_gate_record(release=release, check=check, now=now)
        activated = _serve_unless_held(namespace=namespace, release=release, held=check.held, serial=serial, now=now)
        kept = " held; the serving release stays active." if check.held else " built; a newer release stays active."
        audit_record(
            namespace=namespace,
            actor=actor,
            action="release",
            release=release,
            note=f"Release #{release.sequence} v{release.knowledge_version}"
            + (" activated." if activated else kept)
            + f" {check.summary()}",
        )
    # The build's manifests (the previous release's and its own, 43 MB each at 100,000 entries) go as
    # soon as they are not needed: the kept copy and the cache save were the peak of a full build.
    del previous
    _manifest_keep(namespace, release, hashes)
    del manifest, stored
    _build_caches_keep(namespace.pk)
    logger.info(
        "Built release %s of %s in %.2fs; stored %d new bytes of %d",
        release.sequence,
        namespace.slug,
        release.build_seconds,
        stored_bytes,
        sum(a.size for a in artifacts),
    )
    return BuildOutcome(release=release, created=True, activated=activated, held=check.held)
