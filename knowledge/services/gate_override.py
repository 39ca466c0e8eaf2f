"""A reviewer's decision on a release the publish gate held: activate it anyway, for a written reason.

Only a reviewer who wrote none of the entry versions the release changes may decide (four eyes, the
rule approvals follow); the reason is kept on the release's gate record and in the audit trail, and
the switch is recorded like any activation (change feed, webhooks). A release built from content
older than what serves now is refused: publishing again builds, and checks, a new one.
"""

from __future__ import annotations

from typing import Final

from django.db import transaction
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import ConflictError, InvalidInputError
from knowledge.models import EntryVersion, GateStatus, Namespace, Release, ReleaseGate, Role
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.four_eyes import four_eyes_check
from knowledge.services.releases import release_activate

NOT_HELD: Final = "Release #{sequence} is not held by the golden questions ({status}); nothing to activate."
NEWER_SERVES: Final = (
    "Release #{active} serves content newer than held release #{sequence}; publish again to build a new one."
)
PRUNED: Final = (
    "Release #{sequence} was held so long that the retention policy dropped its files; publish again to build "
    "and check a new one."
)
REASON_NEEDED: Final = "Write why the held release may serve although its golden questions regressed."
REASON_MAX: Final = 2000


class ReleaseNotHeldError(ConflictError):
    code = "release_not_held"


class ReasonRequiredError(InvalidInputError):
    code = "reason_required"


def _changed_versions(release: Release, compared_with: Release | None) -> list[int]:
    """Primary keys of the entry versions this release serves that the compared release did not."""
    before = {(item["id"], item["version"]) for item in (compared_with.manifest["entries"] if compared_with else [])}
    changed = {(item["id"], item["version"]) for item in release.manifest["entries"]} - before
    rows = EntryVersion.objects.filter(
        entry__namespace_id=release.namespace_id, entry__public_id__in={entry_id for entry_id, _ in changed}
    ).values_list("pk", "entry__public_id", "number")
    return [pk for pk, public_id, number in rows if (public_id, number) in changed]


def release_contributor_ids(*, release: Release, compared_with: Release | None) -> set[int]:
    """Everyone who wrote a version this release changes: they may not wave its regressions through."""
    versions = EntryVersion.objects.filter(pk__in=_changed_versions(release, compared_with))
    authors = {author for author in versions.values_list("author_id", flat=True) if author is not None}
    editors = EntryVersion.contributors.through.objects.filter(entryversion_id__in=versions.values("pk"))
    return authors | set(editors.values_list("user_id", flat=True))


@transaction.atomic
def release_gate_override(*, release: Release, actor: Actor, reason: str, check_permission: bool = True) -> Release:
    """Activate a held release because a reviewer says why its regressions are acceptable (audited)."""
    namespace = Namespace.objects.select_for_update().get(pk=release.namespace_id)
    if check_permission:
        require_role(user=actor, namespace=namespace, role=Role.REVIEWER)
    reason = reason.strip()
    if not reason:
        raise ReasonRequiredError(REASON_NEEDED)
    gate = ReleaseGate.objects.select_for_update().filter(release=release).first()
    if gate is None or gate.status != GateStatus.HELD:
        status = gate.get_status_display() if gate else "never checked"
        raise ReleaseNotHeldError(NOT_HELD.format(sequence=release.sequence, status=status.lower()))
    release.refresh_from_db(fields=["files_pruned_at"])  # a prune decides under the namespace lock too
    if release.files_pruned_at is not None:
        raise ConflictError(PRUNED.format(sequence=release.sequence))
    four_eyes_check(
        namespace=namespace,
        contributors=release_contributor_ids(release=release, compared_with=gate.compared_with),
        actor=actor,
    )
    active = namespace.active_release
    now = timezone.now()
    if not release_activate(namespace_id=namespace.pk, release=release, serial=release.content_serial, now=now):
        serving = active.sequence if active else "?"
        raise ConflictError(NEWER_SERVES.format(active=serving, sequence=release.sequence))
    gate.status = GateStatus.OVERRIDDEN
    gate.decided_by = actor_user(actor)
    gate.reason = reason[:REASON_MAX]
    gate.decided_at = now
    gate.save(update_fields=["status", "decided_by", "reason", "decided_at"])
    audit_record(
        namespace=namespace,
        actor=actor,
        action="gate-override",
        release=release,
        note=f"Activated held release #{release.sequence} ({gate.regressions} regressed): {gate.reason}",
    )
    return release
