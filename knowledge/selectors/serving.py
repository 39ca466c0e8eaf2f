"""What the read surface serves: namespaces and their active release, loaded once per process.

A request resolves its namespace through an in-process cache (knowledge.resilience.stale: fresh for
NAMESPACE_TTL_SECONDS, so a publish is visible within about a second without a query per request,
revalidated in the background, and served stale while the database fails), then reads the active
release from the loaded-release cache: artifacts, the compiled index and the snapshot, read from the
database once per process per release id and shared by every request. Serving never touches entry rows.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson
from django.db import connections

from knowledge.heartbeat import heartbeat
from knowledge.ids import ID_PATTERN
from knowledge.models import ApiKey, Artifact, Namespace, NamespaceHost, Release
from knowledge.models.namespace import api_key_digest
from knowledge.resilience.stale import StaleCache
from knowledge.retrieval.contract.records import PUBLIC, Tombstone
from knowledge.retrieval.entry_table import EntryColumns, EntryTable, Picked
from knowledge.retrieval.index import SearchIndex
from knowledge.retrieval.paths import PathScope
from knowledge.retrieval.payload import ReleaseView
from knowledge.retrieval.render.release import CONTEXT_JSON, INDEX_NAMES, SEARCH_INDEX, SITE_JSON
from knowledge.retrieval.render.site import (
    render_site_json,
    snapshot_complete,
    snapshot_from_artifacts,
    snapshot_from_site,
)
from knowledge.retrieval.snapshot import EntryRecord, ReleaseStamp, Snapshot
from knowledge.retrieval.tiers import LEVELS, PROTECTED_JSON, index_name, tier_for, visible
from knowledge.selectors.artifacts import artifact_content, artifact_contents, artifact_stream
from knowledge.selectors.release_files import entries_file_name, index_file_name, release_file_mapped
from knowledge.selectors.release_notices import release_notices_listen
from knowledge.selectors.snapshots import snapshot_read
from knowledge.selectors.switching import ReleaseCache

NAMESPACE_TTL_SECONDS = 1.0  # a revoked key is visible within this time; a switch too, unless announced sooner
LOADED_RELEASES_MAX = 32
TTL_CACHE_MAX = 10_000
# Artifacts above this size are served from the database on a full GET (their ETag stays in memory):
# at 100k entries llms-full.txt and context.json are ~100 MB each, which no worker should hold twice.
HELD_ARTIFACT_BYTES = 4 * 1024 * 1024
STREAM_CHUNK_BYTES = 1024 * 1024  # a large file is read and sent a slice at a time
MAPPED = INDEX_NAMES  # read into files every worker maps (context.json is, as an entry table)
NEAREST_COUNT = 3  # seed §6 / §5: an unknown ID answers with the three nearest existing IDs
ASKED_MAX = 64
# The number of a mistyped ID, read from its upper-cased text: the first run of ASCII digits after the prefix,
# whatever separates them (EG-202, EG_202, EG 202, or nothing: EG202) and whatever follows (EG-202x, a NUL).
_ASKED_DIGITS = re.compile(r"[^A-Z0-9]*(?:[A-Z][A-Z0-9]*?[^A-Z0-9]+|[A-Z]+)?(?P<digits>[0-9]+)")

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class NamespaceState:
    """A namespace as the gateway needs it: identity, access, limits and its active release."""

    id: int
    slug: str
    is_public: bool
    rate_limit: str
    release_id: int | None
    release_key: str | None  # changes whenever the active release does; part of every cache key
    log_requests: bool = True  # the namespace records agents' requests (knowledge.requestlog)


@dataclass(frozen=True, slots=True)
class ServedArtifact:
    """One file of a release. Large files (llms-full.txt, context.json of a big namespace) are not kept in
    memory: their ETag is, so 304s cost nothing, and a full answer reads the bytes from the database."""

    content_type: str
    etag: str
    size: int
    release_id: int
    name: str
    held: bytes | None

    @property
    def content(self) -> bytes:
        if self.held is not None:
            return self.held
        return artifact_content(release_id=self.release_id, name=self.name)

    def stream(self, start: int, end: int) -> Iterator[bytes]:
        """Bytes `start`..`end` (inclusive) in slices of STREAM_CHUNK_BYTES, read from the database one slice at a
        time, so a 100 MB file never sits whole in a worker. Which stored bytes it reads is settled here, before
        the answer starts (a pruned or missing file fails now, not half-way through the answer)."""
        if self.held is not None:
            return iter((self.held[start : end + 1],))
        return artifact_stream(
            release_id=self.release_id, name=self.name, start=start, end=end, slice_bytes=STREAM_CHUNK_BYTES
        )


@dataclass
class LoadedRelease:
    """One release in memory: its artifacts, compiled index and snapshot (entries by index position)."""

    release_id: int
    namespace_id: int | None
    key: str
    snapshot: Snapshot
    stamp: ReleaseStamp
    index: SearchIndex
    artifacts: dict[str, ServedArtifact]
    by_id: dict[str, int]
    tombstones: dict[str, Tombstone]
    numbered: list[tuple[int, str]]  # (number, id) ascending, for the nearest IDs
    view: ReleaseView  # view.entries are the packable entries, in the index's positions
    levels: tuple[str, ...] = (PUBLIC,)  # the clearances with their own index (knowledge.retrieval.tiers)
    clearance: str = PUBLIC  # whose view this is: the loaded release is public; cleared() gives the others
    origin: LoadedRelease | None = None  # a wider view's public release
    memo: dict[Any, Any] = field(default_factory=dict)

    def public_view(self) -> LoadedRelease:
        """The public release this view belongs to: what pages and public files are made of."""
        return self.origin or self

    def cleared(self, clearance: str) -> LoadedRelease:
        """The release as a caller with `clearance` reads it (this one when it sees nothing more).

        A wider view is loaded on first use from protected.json and its own index, and kept with
        the release; its ``key`` differs, so no response cache mixes views.
        """
        level = tier_for(clearance, self.levels)
        if level == self.clearance:
            return self
        return self.memoized(("tier", level), lambda: _tier_load(self, level))

    def entry(self, entry_id: str) -> EntryRecord | None:
        position = self.by_id.get(entry_id)
        return None if position is None else self.snapshot.entries[position]

    def nearest(self, entry_id: str) -> tuple[str, ...]:
        """The three published IDs nearest the requested one (ids_nearest)."""
        if not self.numbered:
            return ()
        width = self.memoized("id_width", lambda: max(len(i) - i.rindex("-") - 1 for _, i in self.numbered))
        return ids_nearest(self.numbered, entry_id, width=width)

    def memoized(self, key: Any, build: Callable[[], T]) -> T:
        """Compute once per release and process (pages, entry payloads): a release never changes."""
        try:
            return self.memo[key]
        except KeyError:
            value = self.memo[key] = build()
            return value


def ids_nearest(numbered: Sequence[tuple[int, str]], entry_id: str, *, width: int) -> tuple[str, ...]:
    """The three IDs of `numbered` ((number, id) ascending) nearest `entry_id`, as seed §6 answers an unknown one.

    The asked text is read for its number whatever its case, separator or stray characters (_ASKED_DIGITS),
    so EG202, eg_202 and EG-202x rank EG-202 first. A number with more digits than any ID (`width`, leading
    zeros aside: EG-2020) is a digit too many: the IDs one deleted digit away come first, then the neighbours
    of its first `width` digits. Otherwise the IDs whose numbers are closest (ties: lower first), as always
    for a well-formed ID; text without a number gets the first IDs.
    """
    if not numbered:
        return ()
    match = _ASKED_DIGITS.match(entry_id[:ASKED_MAX].upper())
    if match is None:
        return tuple(i for _, i in numbered[:NEAREST_COUNT])
    digits = match["digits"].lstrip("0") or "0"
    picked: list[str] = []
    if len(digits) > width:
        for at in reversed(range(len(digits))):
            picked += [i for i in _numbered_as(numbered, int(digits[:at] + digits[at + 1 :])) if i not in picked]
        digits = digits[:width]
    number = int(digits)
    at = bisect_left(numbered, (number, ""))
    window = [item for item in numbered[max(0, at - NEAREST_COUNT) : at + NEAREST_COUNT] if item[1] not in picked]
    window.sort(key=lambda item: (abs(item[0] - number), item[0]))
    return tuple([*picked, *(i for _, i in window)][:NEAREST_COUNT])


def _numbered_as(numbered: Sequence[tuple[int, str]], number: int) -> list[str]:
    at = bisect_left(numbered, (number, ""))
    found = []
    while at < len(numbered) and numbered[at][0] == number:
        found.append(numbered[at][1])
        at += 1
    return found


_states = StaleCache(fresh_seconds=lambda: NAMESPACE_TTL_SECONDS, size=TTL_CACHE_MAX)


def serving_caches_clear() -> None:
    """Forget every cached namespace, key and loaded release of this process (tests, admin actions)."""
    _states.clear()
    _releases.clear()


def releases_in_memory() -> int:
    """How many releases this process holds (what it can serve while the database fails)."""
    return len(_releases)


def release_cache_key(release: Release) -> str:
    """The key a loaded release is held under (and part of every response cache key)."""
    return f"{release.pk}.{release.inputs_hash[:12]}.{int(release.built_at.timestamp())}"


def _release_key(namespace: Namespace) -> str | None:
    release = namespace.active_release
    return None if release is None else release_cache_key(release)


def _state(namespace: Namespace | None) -> NamespaceState | None:
    if namespace is None:
        return None
    return NamespaceState(
        id=namespace.pk,
        slug=namespace.slug,
        is_public=namespace.is_public,
        rate_limit=namespace.rate_limit,
        release_id=namespace.active_release_id,
        release_key=_release_key(namespace),
        log_requests=namespace.log_requests,
    )


def _namespaces() -> Any:
    return Namespace.objects.select_related("active_release").only(
        "id",
        "slug",
        "is_public",
        "rate_limit",
        "log_requests",
        "active_release__id",
        "active_release__inputs_hash",
        "active_release__built_at",
    )


def namespace_state_get(*, slug: str) -> NamespaceState | None:
    """The namespace with this slug, or None; at most one query per second per process and slug."""
    release_notices_listen(_switched)
    return _states.get(("slug", slug), lambda: _state(_namespaces().filter(slug=slug).first()))


def _switched(namespace_id: int) -> None:
    """A switch was announced (knowledge.selectors.release_notices): read the namespace again now, and
    start loading its new release in the background if this process serves it."""
    try:
        for state in _states.reload(lambda held: isinstance(held, NamespaceState) and held.id == namespace_id):
            if isinstance(state, NamespaceState) and state.release_id is not None and _releases.serves(state.id):
                release_served(state)
    finally:
        connections.close_all()  # this thread's own connection


def namespace_state_for_host(*, host: str) -> NamespaceState | None:
    """The namespace a host name routes to (NamespaceHost), or None when the host has none."""

    def load() -> NamespaceState | None:
        found = NamespaceHost.objects.filter(host=host).values_list("namespace_id", flat=True).first()
        return None if found is None else _state(_namespaces().filter(pk=found).first())

    release_notices_listen(_switched)
    return _states.get(("host", host), load)


KEY_VALID = "valid"


def _key_check(namespace_id: int, digest: str) -> tuple[str, str]:
    found = ApiKey.objects.filter(digest=digest).values_list("namespace_id", "revoked_at", "clearance").first()
    if found is None:
        return "unknown_key", PUBLIC
    if found[0] != namespace_id:
        return "other_namespace_key", PUBLIC
    return ("revoked_key", PUBLIC) if found[1] is not None else (KEY_VALID, str(found[2]))


def api_key_check(*, namespace_id: int, token: str) -> tuple[str, str]:
    """(status, clearance) of a bearer token: ``"valid"`` and the key's clearance for an unrevoked key of
    this namespace, else why not (for the security log only: ``unknown_key``, ``revoked_key``,
    ``other_namespace_key``) and ``"public"``. One query by digest, cached briefly."""
    digest = api_key_digest(token)
    status, clearance = _states.get(("key", namespace_id, digest), lambda: _key_check(namespace_id, digest))
    return str(status), str(clearance)


def api_key_status(*, namespace_id: int, token: str) -> str:
    return api_key_check(namespace_id=namespace_id, token=token)[0]


def api_key_valid(*, namespace_id: int, token: str) -> bool:
    """Whether the bearer token is an unrevoked key of this namespace (only its SHA-256 is compared)."""
    return api_key_status(namespace_id=namespace_id, token=token) == KEY_VALID


def release_read(*, release_id: int, key: str, namespace_id: int | None) -> LoadedRelease:
    """Read a release into memory without caching it (knowledge.selectors.pinned keeps its own)."""
    return _load(release_id, key, namespace_id)


def _load(release_id: int, key: str, namespace_id: int | None) -> LoadedRelease:
    # Only the bytes this process keeps are read, a row at a time (a server-side cursor on PostgreSQL):
    # bytea arrives as hex, twice its size. The index and the entries are files every worker maps
    # (knowledge.selectors.release_files), which the build wrote on its own host; they are read from
    # the database only by the first process of another host to need them.
    files = Artifact.objects.filter(release_id=release_id)
    described = list(files.values_list("name", "content_type", "etag", "size"))
    wanted = [name for name, _, _, size in described if name not in MAPPED and size <= HELD_ARTIFACT_BYTES]
    held = dict(artifact_contents(release_id=release_id, names=wanted))
    artifacts = {
        name: ServedArtifact(content_type, etag, size, release_id, name, held.get(name))
        for name, content_type, etag, size in described
    }

    def read(name: str) -> bytes:
        return held[name] if name in held else artifact_content(release_id=release_id, name=name)

    def copy(name: str, path: Path) -> None:
        _copy(artifacts[name], path)

    etags = {name: etag for name, _, etag, _ in described}
    if SITE_JSON in etags:
        snapshot, stamp = _mapped_snapshot(etags, read(SITE_JSON), copy)
    else:  # a release built before site.json existed: take the rest of the snapshot from the database
        snapshot, stamp = _legacy_snapshot(release_id, read(CONTEXT_JSON))
    # Prepared here, in the loader a switch runs in the background, so no request pays for it.
    index = _index_mapped(artifacts[SEARCH_INDEX])
    levels = tuple(level for level in LEVELS if index_name(level) in artifacts)
    return _loaded(release_id, namespace_id, key, snapshot, stamp, index, artifacts, levels)


def _copy(artifact: ServedArtifact, path: Path) -> None:
    """A stored file written to `path` a slice at a time: the worker never holds it whole."""
    with open(path, "wb") as out:
        for part in artifact.stream(0, artifact.size - 1):
            out.write(part)


def _index_mapped(artifact: ServedArtifact) -> SearchIndex:
    """A stored index (the public one or a tier's) from the file every worker of the host maps: written
    by the build or made from storage by the first process to need it, as the workers map it (with the
    impacts its format derives: serve_file), so its arrays are the page cache's, not a copy per worker."""

    def produce(path: Path) -> None:
        _copy(artifact, path)
        SearchIndex.serve_file(path)

    return SearchIndex.from_bytes(release_file_mapped(name=index_file_name(artifact.etag), produce=produce)).prepared()


def _mapped_snapshot(
    etags: dict[str, str], site_json: bytes, copy: Callable[[str, Path], None]
) -> tuple[Snapshot, ReleaseStamp]:
    """The snapshot with its entries in a mapped entry table: the build wrote it on this host, or a
    short-lived process makes it from context.json (knowledge.retrieval.entry_table.main), so parsing
    it is never this worker's memory."""

    def produce(table: Path) -> None:
        # Named after the table's partial name, so what a killed worker leaves is its (partial_files).
        with tempfile.TemporaryDirectory(dir=table.parent, prefix=f"{table.name}.") as directory:
            site, context = Path(directory) / SITE_JSON, Path(directory) / CONTEXT_JSON
            site.write_bytes(site_json)
            copy(CONTEXT_JSON, context)
            subprocess.run(  # noqa: S603 - this interpreter and paths this process made
                [sys.executable, "-m", "knowledge.retrieval.entry_table", str(site), str(context), str(table)],
                check=True,
                capture_output=True,
            )

    name = entries_file_name(site_etag=etags[SITE_JSON], context_etag=etags[CONTEXT_JSON])
    table = EntryTable(release_file_mapped(name=name, produce=produce))
    return snapshot_from_site(orjson.loads(site_json), table, table.tombstones)


def _loaded(
    release_id: int,
    namespace_id: int | None,
    key: str,
    snapshot: Snapshot,
    stamp: ReleaseStamp,
    index: SearchIndex,
    artifacts: dict[str, ServedArtifact],
    levels: tuple[str, ...],
    clearance: str = PUBLIC,
) -> LoadedRelease:
    # A mapped table carries the columns read here (no entry is parsed); other entries are read once.
    entries = snapshot.entries
    columns = entries.columns if isinstance(entries, EntryTable) else EntryColumns.of(entries)
    numbered = sorted((int(m["number"]), i) for i in columns.ids if (m := ID_PATTERN.match(i)) is not None)
    kept = columns.packable(revision=stamp.revision)
    in_packs, packed = (entries, columns) if kept is None else (Picked(entries, kept), columns.picked(kept))
    return LoadedRelease(
        release_id=release_id,
        namespace_id=namespace_id,
        key=key,
        snapshot=snapshot,
        stamp=stamp,
        index=index,
        artifacts=artifacts,
        by_id={entry_id: i for i, entry_id in enumerate(columns.ids)},
        tombstones={t.id: t for t in snapshot.tombstones},
        numbered=numbered,
        view=ReleaseView(
            release_id=stamp.sequence,
            namespace=snapshot.namespace,
            stamp=stamp,
            entries=in_packs,
            scope=PathScope.of(packed.layers, packed.scoped),
        ),
        levels=levels,
        clearance=clearance,
    )


def release_in_memory(*, snapshot: Snapshot, stamp: ReleaseStamp, index: SearchIndex) -> LoadedRelease:
    """A release that is not served (a build's candidate, a review preview) as serving would load it.

    `snapshot` is the public view, as site.json and context.json give it; nothing is cached.
    """
    return _loaded(0, None, f"unserved.{stamp.sequence}", snapshot, stamp, index, {}, (PUBLIC,))


def _tier_load(public: LoadedRelease, level: str) -> LoadedRelease:
    """A cleared caller's view of a loaded release: protected.json, read once per process, and the tier's
    index, mapped as the public one is."""
    full = snapshot_complete(public.snapshot, public.artifacts[PROTECTED_JSON].content)
    index = _index_mapped(public.artifacts[index_name(level)])
    key = f"{public.key}~{level}"
    tier = visible(full, level)
    loaded = _loaded(
        public.release_id, public.namespace_id, key, tier, public.stamp, index, public.artifacts, public.levels, level
    )
    loaded.origin = public
    return loaded


def _legacy_snapshot(release_id: int, context_json: bytes) -> tuple[Snapshot, ReleaseStamp]:
    namespace = Namespace.objects.get(releases__id=release_id)
    current = snapshot_read(namespace=namespace)
    document = orjson.loads(context_json)
    stamp = ReleaseStamp(
        sequence=document["releaseId"],
        knowledge_version=document["knowledgeVersion"],
        revision=document["revision"],
        generated_at=document["generatedAt"],
    )
    return snapshot_from_artifacts(site_json=render_site_json(current, stamp), context_json=context_json)


def release_loaded(*, release_id: int, key: str, namespace_id: int | None = None) -> LoadedRelease:
    """The release in memory, loading it on first use in this process (knowledge.selectors.switching).

    For a namespace this process already serves, a new release loads in the background and the
    previous one answers until it is complete: a switch never stalls a request. A worker holds one
    release per namespace (requests still using the old one keep their reference until they finish).
    """
    return _releases.get(release_id, key, namespace_id)


def release_served(state: NamespaceState) -> LoadedRelease:
    """The release this process answers `state`'s requests from (see release_loaded); it must have one."""
    if state.release_id is None or state.release_key is None:
        raise ValueError(f"namespace {state.slug} has no release")
    return release_loaded(release_id=state.release_id, key=state.release_key, namespace_id=state.id)


def release_switch_wait(*, key: str) -> None:
    """Until this process has finished loading the release `key` names, if it is loading it."""
    _releases.wait(key)


def release_metrics(*, release_id: int) -> dict[str, Any]:
    """What the build measured (contextShape, budgetScan); empty for releases built before it did."""
    found = Release.objects.filter(pk=release_id).values_list("metrics", flat=True).first()
    return dict(found or {})


# A load's thread opens its own database connection: close it when the load is done. A request
# waiting for a first load keeps its gunicorn worker alive meanwhile.
_releases: ReleaseCache[LoadedRelease] = ReleaseCache(
    _load, size=LOADED_RELEASES_MAX, after_background=connections.close_all, waiting=heartbeat
)
