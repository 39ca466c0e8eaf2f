"""Rolling back to an earlier release as a reviewed revert, never as a bare switch of the served release.

The target release's entry versions become the published ones again through audited transitions by
the reviewer who asked, so the published state and the served release agree and later publishes
build on the rollback instead of undoing it. Retirement is permanent (seed §6): an entry retired
since the target release stays retired; only `entry_restore` brings it back. Docs, prompt packs and
namespace settings are not versioned with releases and stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor
from knowledge.errors import InvalidInputError
from knowledge.models import ActivationKind, BuildRequest, Entry, EntryVersion, Namespace, Release, Role, VersionState
from knowledge.selectors.snapshots import snapshot_read
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import build_request_record, build_requests_satisfy, content_serial_bump
from knowledge.services.releases import release_activate
from knowledge.services.versions import version_revert

ROLLBACK_FOREIGN = "Release {release} belongs to another namespace."
ROLLBACK_ACTIVE = "Release #{sequence} is already the active release."


@dataclass(frozen=True, slots=True)
class RollbackOutcome:
    target: Release
    reverted: tuple[str, ...]  # entries whose published version changed back to the target's
    unpublished: tuple[str, ...]  # entries the target release did not have: no version is published now
    kept_retired: tuple[str, ...]  # entries of the target release retired since: they stay retired
    activated: bool  # the target release serves now; otherwise a build of the reverted state is queued

    def describe(self) -> str:
        """One paragraph for the admin message and the command's output."""
        parts = [f"{len(self.reverted)} entries reverted to their version in release #{self.target.sequence}"]
        if self.unpublished:
            parts.append(f"{len(self.unpublished)} published since were taken off ({', '.join(self.unpublished)})")
        if self.kept_retired:
            parts.append(f"{', '.join(self.kept_retired)} stay retired")
        serving = (
            f"release #{self.target.sequence} serves again"
            if self.activated
            else "a new release of the reverted versions is being built"
        )
        return "; ".join(parts) + f". {serving[0].upper()}{serving[1:]}."


@transaction.atomic
def release_rollback(*, namespace: Namespace, release: Release, actor: Actor, note: str = "") -> RollbackOutcome:
    """Publish the target release's entry versions again (audited, by `actor`) and serve that state."""
    require_role(user=actor, namespace=namespace, role=Role.REVIEWER)
    if release.namespace_id != namespace.pk:
        raise InvalidInputError(ROLLBACK_FOREIGN.format(release=release.pk))
    # Entries, then the newest release's row, then the namespace row: the order publishing and retiring
    # lock entries and the namespace in, and the order a build locks the release row and the namespace in.
    # The release row is the lock a prune takes (release_storage.releases_prune): neither runs while the
    # other does. `no_key`: foreign-key checks on rows that refer to it (FOR KEY SHARE) still pass.
    entries = list(Entry.objects.select_for_update().filter(namespace=namespace).order_by("pk"))
    Release.objects.select_for_update(no_key=True).filter(namespace=namespace).order_by("-sequence").only("pk").first()
    namespace = Namespace.objects.select_for_update().get(pk=namespace.pk)
    # A prune may have dropped the target's files while this waited for the locks: read it under them.
    release.refresh_from_db(fields=["files_pruned_at"])
    if namespace.active_release_id == release.pk:
        raise InvalidInputError(ROLLBACK_ACTIVE.format(sequence=release.sequence))

    wanted: dict[str, int] = {item["id"]: item["version"] for item in release.manifest["entries"]}
    live = dict(
        EntryVersion.objects.filter(entry__namespace=namespace, state=VersionState.PUBLISHED).values_list(
            "entry_id", "number"
        )
    )
    changing = [e for e in entries if e.retired_at is None and live.get(e.pk) != wanted.get(e.public_id)]
    versions = {
        (v.entry_id, v.number): v
        for v in EntryVersion.objects.filter(entry__in=[e for e in changing if e.public_id in wanted])
    }
    why = f"Rollback to release #{release.sequence}" + (f": {note}" if note else ".")
    reverted: list[str] = []
    unpublished: list[str] = []
    for entry in changing:
        number = wanted.get(entry.public_id)
        version = versions[(entry.pk, number)] if number is not None else None
        version_revert(entry=entry, version=version, actor=actor, note=why)
        (reverted if version is not None else unpublished).append(entry.public_id)
    kept_retired = tuple(e.public_id for e in entries if e.retired_at is not None and e.public_id in wanted)

    audit_record(
        namespace=namespace,
        actor=actor,
        action="rollback",
        release=release,
        note=f"{why} Reverted {len(reverted)}, took off {len(unpublished)}, kept retired {len(kept_retired)}.",
    )
    serial = content_serial_bump(namespace=namespace)
    # A release whose files were pruned is rendered again by the build before it serves.
    activated = (
        release.files_pruned_at is None and snapshot_read(namespace=namespace).inputs_hash() == release.inputs_hash
    )
    if activated:
        # Nothing it was built from differs (no retirement, docs or settings changed since): serve it as is.
        now = timezone.now()
        release_activate(namespace_id=namespace.pk, release=release, serial=serial, kind=ActivationKind.ROLLBACK)
        build_requests_satisfy(namespace_id=namespace.pk, serial=serial, release=release, now=now)
        BuildRequest.objects.create(
            namespace=namespace, serial=serial, reason="rollback", built_at=now, release=release
        )
    else:
        build_request_record(namespace=namespace, serial=serial, reason="rollback")
    return RollbackOutcome(
        target=release,
        reverted=tuple(reverted),
        unpublished=tuple(unpublished),
        kept_retired=kept_retired,
        activated=activated,
    )
