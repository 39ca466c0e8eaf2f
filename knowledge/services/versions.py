"""A version's way through review: edit, submit, approve or reject, publish, withdraw."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import (
    NOT_EDITABLE,
    OPEN_VERSION_EXISTS,
    RETIRED_ENTRY,
    STALE_DRAFT,
    ConflictError,
    InvalidInputError,
)
from knowledge.models import Entry, EntryVersion, Role, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.services.access import require_role
from knowledge.services.actors import system_actor
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build
from knowledge.services.content import VersionContent, content_references_check
from knowledge.services.four_eyes import (
    contribution_record,
    contributions_carried,
    four_eyes_check,
    version_contributor_ids,
)
from knowledge.services.safety import approval_safety_check, findings_record
from knowledge.workflow import ROLLBACK_TRANSITIONS, TRANSITIONS, check_transition

ACTION_ROLES = {
    "submit": Role.EDITOR,
    "withdraw": Role.EDITOR,
    "approve": Role.REVIEWER,
    "reject": Role.REVIEWER,
    "publish": Role.REVIEWER,
    "revert": Role.REVIEWER,
}


def _locked(version: EntryVersion) -> EntryVersion:
    """Re-read the version under a row lock, with its entry and namespace."""
    return EntryVersion.objects.select_for_update().select_related("entry__namespace").get(pk=version.pk)


def _transition(
    version: EntryVersion,
    *,
    target: str,
    actor: Actor,
    note: str = "",
    check_permission: bool = True,
    table: dict[tuple[str, str], str] = TRANSITIONS,
) -> EntryVersion:
    action = check_transition(version.state, target, table=table)
    entry = version.entry
    if check_permission:
        require_role(user=actor, namespace=entry.namespace, role=ACTION_ROLES[action])
    if entry.retired_at is not None and target != VersionState.WITHDRAWN:
        raise InvalidInputError(RETIRED_ENTRY.format(entry=entry.public_id))
    previous = version.state
    version.state = target
    version.save(update_fields=["state", "modified_at"])
    audit_record(
        namespace=entry.namespace,
        actor=actor,
        action=action,
        entry=entry,
        version=version,
        from_state=previous,
        to_state=target,
        note=note,
    )
    return version


def version_draft_for_entry(*, entry: Entry, actor: Actor, base: EntryVersion | None = None) -> EntryVersion:
    """The entry's draft, creating one from `base` (default: the live or latest version); the live one keeps serving.

    With an explicit `base` (revert to an earlier version, revise a rejected one) an open version is
    refused rather than reused, so nobody's draft is silently replaced.
    """
    return version_draft_opened(entry=entry, actor=actor, base=base)[0]


@transaction.atomic
def version_draft_opened(*, entry: Entry, actor: Actor, base: EntryVersion | None = None) -> tuple[EntryVersion, bool]:
    """version_draft_for_entry, and whether this call created the draft (decided under the entry's lock:
    of several calls at once, one creates it and the others find it)."""
    require_role(user=actor, namespace=entry.namespace, role=Role.EDITOR)
    entry = Entry.objects.select_for_update().select_related("namespace").get(pk=entry.pk)
    if entry.retired_at is not None:
        raise InvalidInputError(RETIRED_ENTRY.format(entry=entry.public_id))
    if base is not None and base.entry_id != entry.pk:
        raise InvalidInputError(f"Version {base.number} is not a version of {entry.public_id}.")
    open_version = entry.versions.filter(state__in=OPEN_STATES).first()
    if open_version is not None:
        if open_version.state == VersionState.DRAFT and base is None:
            return open_version, False
        raise InvalidInputError(
            OPEN_VERSION_EXISTS.format(
                entry=entry.public_id, number=open_version.number, state=open_version.get_state_display().lower()
            )
        )
    base = base or entry.live_version or entry.versions.order_by("-number").first()
    assert base is not None  # every entry is created with its first version
    number = (entry.versions.aggregate(top=Max("number"))["top"] or 0) + 1
    draft = EntryVersion.objects.create(
        entry=entry,
        number=number,
        author=actor_user(actor),
        title=base.title,
        summary=base.summary,
        body=base.body,
        tags=base.tags,
        confidence=base.confidence,
        links=base.links,
        aliases=base.aliases,
        updated=timezone.localdate(),
        sensitivity=base.sensitivity,
        valid_until=base.valid_until,
        paths=base.paths,
        overrides=base.overrides,
        tokens=base.tokens,
        content_hash=base.content_hash,
    )
    contribution_record(version=draft, actor=actor)
    contributions_carried(draft=draft, base=base)
    audit_record(
        namespace=entry.namespace,
        actor=actor,
        action="create",
        entry=entry,
        version=draft,
        to_state="draft",
        note=f"Draft from version {base.number}.",
    )
    return draft, True


@transaction.atomic
def version_save(
    *, version: EntryVersion, content: VersionContent, expected_lock_version: int, actor: Actor
) -> EntryVersion:
    """Save a draft's content unless someone saved it since `expected_lock_version` (optimistic lock)."""
    require_role(user=actor, namespace=version.entry.namespace, role=Role.EDITOR)
    current = _locked(version)
    if current.state != VersionState.DRAFT:
        raise InvalidInputError(NOT_EDITABLE.format(number=current.number, state=current.get_state_display().lower()))
    if current.lock_version != expected_lock_version:
        raise ConflictError(STALE_DRAFT.format(expected=expected_lock_version, current=current.lock_version))
    content_references_check(namespace=current.entry.namespace, public_id=current.entry.public_id, content=content)
    fields = content.model_fields()
    EntryVersion.objects.filter(pk=current.pk, lock_version=expected_lock_version).update(
        **fields, lock_version=F("lock_version") + 1, modified_at=timezone.now()
    )
    current.refresh_from_db()
    contribution_record(version=current, actor=actor)
    audit_record(
        namespace=current.entry.namespace,
        actor=actor,
        action="edit",
        entry=current.entry,
        version=current,
        from_state=current.state,
        to_state=current.state,
    )
    return current


@transaction.atomic
def version_submit(*, version: EntryVersion, actor: Actor, note: str = "") -> EntryVersion:
    version = _locked(version)
    version = _transition(version, target=VersionState.IN_REVIEW, actor=actor, note=note)
    version.submitted_at = timezone.now()
    version.save(update_fields=["submitted_at"])
    findings_record(version=version, namespace=version.entry.namespace)
    return version


@transaction.atomic
def version_approve(
    *,
    version: EntryVersion,
    actor: Actor,
    note: str = "",
    publish_at: datetime | None = None,
    acknowledgement: str = "",
) -> EntryVersion:
    """Approve a version nobody approving it wrote (four eyes) and the safety scan passes, optionally
    scheduling its go-live. `acknowledgement` is the reviewer's reason for accepting the scan's warnings."""
    version = _locked(version)
    namespace = version.entry.namespace
    check_transition(version.state, VersionState.APPROVED)
    require_role(user=actor, namespace=namespace, role=Role.REVIEWER)
    four_eyes_check(namespace=namespace, contributors=version_contributor_ids(version=version), actor=actor)
    approval_safety_check(version=version, namespace=namespace, actor=actor, acknowledgement=acknowledgement)
    version = _transition(version, target=VersionState.APPROVED, actor=actor, note=note, check_permission=False)
    version.reviewer = actor_user(actor)
    version.review_note = note
    version.reviewed_at = timezone.now()
    version.publish_at = publish_at
    version.review_by = version.review_by or review_by_default(version=version, approved_on=timezone.localdate())
    version.save(update_fields=["reviewer", "review_note", "reviewed_at", "publish_at", "review_by"])
    return version


def review_by_default(*, version: EntryVersion, approved_on: date) -> date | None:
    """Issue 12 §6: the category's re-review period after approval (None when the category sets none)."""
    days = version.entry.category.review_days
    return approved_on + timedelta(days=days) if days else None


@transaction.atomic
def version_reject(*, version: EntryVersion, actor: Actor, note: str) -> EntryVersion:
    if not note.strip():
        raise InvalidInputError("Say what has to change: the author reads the note.")
    version = _locked(version)
    version = _transition(version, target=VersionState.REJECTED, actor=actor, note=note)
    version.reviewer = actor_user(actor)
    version.review_note = note
    version.reviewed_at = timezone.now()
    version.save(update_fields=["reviewer", "review_note", "reviewed_at"])
    return version


@transaction.atomic
def version_withdraw(*, version: EntryVersion, actor: Actor, note: str = "") -> EntryVersion:
    return _transition(_locked(version), target=VersionState.WITHDRAWN, actor=actor, note=note)


@transaction.atomic
def version_publish(
    *, version: EntryVersion, actor: Actor, note: str = "", check_permission: bool = True
) -> EntryVersion:
    """Make an approved version live: the previous one is superseded and a release build is queued."""
    version = _locked(version)
    entry = Entry.objects.select_for_update().select_related("namespace").get(pk=version.entry_id)
    check_transition(version.state, VersionState.PUBLISHED)
    if check_permission:
        require_role(user=actor, namespace=entry.namespace, role=Role.REVIEWER)
    live = entry.versions.filter(state=VersionState.PUBLISHED).exclude(pk=version.pk).first()
    if live is not None:
        _transition(live, target=VersionState.SUPERSEDED, actor=actor, check_permission=False)
    version = _transition(version, target=VersionState.PUBLISHED, actor=actor, note=note, check_permission=False)
    version.published_at = timezone.now()
    version.save(update_fields=["published_at"])
    entry.live_version = version
    entry.save(update_fields=["live_version"])
    release_request_build(namespace=entry.namespace, reason="publish")
    return version


def version_revert(*, entry: Entry, version: EntryVersion | None, actor: Actor, note: str) -> bool:
    """Make an earlier version the entry's published one again (None: publish none); a rollback's step.

    Every change is an audited transition (the live version is superseded, the earlier one goes from
    superseded back to published). The caller holds the entry's row lock and has checked the actor's
    reviewer role. Returns whether anything changed.
    """
    live = entry.versions.filter(state=VersionState.PUBLISHED).first()
    if (live.pk if live else None) == (version.pk if version else None):
        return False
    if live is not None:
        _transition(live, target=VersionState.SUPERSEDED, actor=actor, note=note, check_permission=False)
    if version is not None:
        _transition(
            version,
            target=VersionState.PUBLISHED,
            actor=actor,
            note=note,
            check_permission=False,
            table=ROLLBACK_TRANSITIONS,
        )
        version.published_at = timezone.now()
        version.save(update_fields=["published_at"])
    entry.live_version = version
    entry.save(update_fields=["live_version"])
    return True


def versions_publish_due(*, now: datetime | None = None) -> int:
    """Publish approved versions whose scheduled go-live has come (run by Celery beat)."""
    now = now or timezone.now()
    due = EntryVersion.objects.filter(state=VersionState.APPROVED, publish_at__lte=now).select_related("reviewer")
    published = 0
    for version in due:
        actor = version.reviewer or system_actor()
        version_publish(version=version, actor=actor, note="Scheduled go-live.", check_permission=False)
        published += 1
    return published
