"""Creating entries (with never-reused IDs), retiring them (tombstones) and restoring a retired one."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from knowledge.actors import Actor, actor_user
from knowledge.errors import BLOCK_FULL, BlockFullError, InvalidInputError
from knowledge.ids import canonical_number, format_public_id
from knowledge.models import Category, Entry, EntryVersion, Namespace, Role, VersionState
from knowledge.models.entry import OPEN_STATES
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.build_queue import release_request_build
from knowledge.services.content import VersionContent, content_references_check
from knowledge.services.four_eyes import contribution_record

ID_TAKEN = "The ID {public_id} is already used in this namespace; IDs are never reused."
ID_MALFORMED = "“{public_id}” is not an ID of this namespace (expected {prefix}-{example})."
ID_OUTSIDE_BLOCKS = "{public_id} is outside the ID blocks of the category {category}; each category numbers its own."
RETIRE_NEEDS_REASON = "Say why the entry is retired: agents receive the reason with 410 Gone."
REPLACEMENT_INVALID = "The replacement {public_id} must be a live entry of this namespace other than {entry}."
ALREADY_RETIRED = "{entry} was already retired on {date}."
NOT_RETIRED = "{entry} is not retired; only a retired entry can be restored."
RESTORE_NEEDS_NOTE = "Say why the entry comes back: the audit trail keeps the reason."


def _next_free_number(*, namespace: Namespace, category: Category, claimed: AbstractSet[int] = frozenset()) -> int:
    """The next number of the category's blocks after the highest ever used there; gaps last. Numbers
    in `claimed` (named by lines of a file not written yet) are passed over as if used."""
    used = Entry.objects.filter(namespace=namespace)
    for block in category.blocks.order_by("start"):
        in_block = used.filter(number__gte=block.start, number__lte=block.end)
        highest = in_block.aggregate(top=Max("number"))["top"]
        candidate = block.start if highest is None else highest + 1
        while candidate in claimed:
            candidate += 1
        if candidate <= block.end:
            return candidate
    for block in category.blocks.order_by("start"):
        taken = set(used.filter(number__gte=block.start, number__lte=block.end).values_list("number", flat=True))
        for number in range(block.start, block.end + 1):
            if number not in taken and number not in claimed:
                return number
    raise BlockFullError(BLOCK_FULL.format(category=category.slug))


def entry_allocate_id(
    *, namespace: Namespace, category: Category, public_id: str | None = None, within_blocks: bool = True
) -> tuple[str, int]:
    """Pick (public ID, number) for a new entry. The caller holds the namespace row lock. A given ID is
    spelled as the namespace writes it and, unless `within_blocks` is false (a synced file keeps the ID
    it carries), lies in one of the category's blocks."""
    if public_id:
        number = canonical_number(public_id, prefix=namespace.prefix, digits=namespace.id_digits)
        if number is None:
            example = "0" * (namespace.id_digits - 1) + "1"
            raise InvalidInputError(ID_MALFORMED.format(public_id=public_id, prefix=namespace.prefix, example=example))
        if Entry.objects.filter(namespace=namespace, number=number).exists():
            raise InvalidInputError(ID_TAKEN.format(public_id=public_id))
        if within_blocks and not category.blocks.filter(start__lte=number, end__gte=number).exists():
            raise InvalidInputError(ID_OUTSIDE_BLOCKS.format(public_id=public_id, category=category.slug))
        return public_id, number
    number = _next_free_number(namespace=namespace, category=category)
    return format_public_id(prefix=namespace.prefix, number=number, digits=namespace.id_digits), number


@transaction.atomic
def entry_create(
    *,
    namespace: Namespace,
    category: Category,
    content: VersionContent,
    actor: Actor,
    public_id: str | None = None,
    within_blocks: bool = True,
    check_permission: bool = True,
) -> EntryVersion:
    """Create an entry and its first draft; two editors at once always get different IDs."""
    if check_permission:
        require_role(user=actor, namespace=namespace, role=Role.EDITOR)
    Namespace.objects.select_for_update().filter(pk=namespace.pk).first()
    public_id, number = entry_allocate_id(
        namespace=namespace, category=category, public_id=public_id, within_blocks=within_blocks
    )
    content_references_check(namespace=namespace, public_id=public_id, content=content)
    entry = Entry.objects.create(
        namespace=namespace,
        public_id=public_id,
        number=number,
        category=category,
        created_by=actor_user(actor),
    )
    version = EntryVersion.objects.create(
        entry=entry,
        number=1,
        author=actor_user(actor),
        **content.model_fields(),
    )
    contribution_record(version=version, actor=actor)
    audit_record(namespace=namespace, actor=actor, action="create", entry=entry, version=version, to_state="draft")
    return version


@transaction.atomic
def entry_retire(
    *, entry: Entry, actor: Actor, reason: str, replaced_by: str = "", check_permission: bool = True
) -> Entry:
    """Retire an entry for good: its ID answers 410 Gone with this tombstone from the next release."""
    if check_permission:
        require_role(user=actor, namespace=entry.namespace, role=Role.REVIEWER)
    entry = Entry.objects.select_for_update().select_related("namespace").get(pk=entry.pk)
    if entry.retired_at is not None:
        raise InvalidInputError(ALREADY_RETIRED.format(entry=entry.public_id, date=entry.retired_at.date()))
    reason = reason.strip()
    if not reason:
        raise InvalidInputError(RETIRE_NEEDS_REASON)
    replaced_by = replaced_by.strip().upper()
    if replaced_by:
        replacement = Entry.objects.filter(
            namespace=entry.namespace, public_id=replaced_by, retired_at__isnull=True
        ).exclude(pk=entry.pk)
        if not replacement.exists():
            raise InvalidInputError(REPLACEMENT_INVALID.format(public_id=replaced_by, entry=entry.public_id))
    for version in entry.versions.filter(state__in=OPEN_STATES):
        previous = version.state
        version.state = VersionState.WITHDRAWN
        version.save(update_fields=["state", "modified_at"])
        audit_record(
            namespace=entry.namespace,
            actor=actor,
            action="withdraw",
            entry=entry,
            version=version,
            from_state=previous,
            to_state=version.state,
            note="Withdrawn because the entry was retired.",
        )
    entry.retired_at = timezone.now()
    entry.retire_reason = reason
    entry.replaced_by = replaced_by
    entry.save(update_fields=["retired_at", "retire_reason", "replaced_by"])
    audit_record(namespace=entry.namespace, actor=actor, action="retire", entry=entry, note=reason)
    release_request_build(namespace=entry.namespace, reason="retire")
    return entry


@transaction.atomic
def entry_restore(*, entry: Entry, actor: Actor, note: str) -> Entry:
    """Bring a retired entry back under its own ID (an explicit, audited reviewer decision).

    Its last published version serves again from the next release; a rollback never does this.
    """
    require_role(user=actor, namespace=entry.namespace, role=Role.REVIEWER)
    entry = Entry.objects.select_for_update().select_related("namespace").get(pk=entry.pk)
    if entry.retired_at is None:
        raise InvalidInputError(NOT_RETIRED.format(entry=entry.public_id))
    note = note.strip()
    if not note:
        raise InvalidInputError(RESTORE_NEEDS_NOTE)
    retired = f"retired {entry.retired_at:%Y-%m-%d}: {entry.retire_reason}"
    entry.retired_at = None
    entry.retire_reason = ""
    entry.replaced_by = ""
    entry.save(update_fields=["retired_at", "retire_reason", "replaced_by"])
    audit_record(namespace=entry.namespace, actor=actor, action="restore", entry=entry, note=f"{note} (was {retired})")
    release_request_build(namespace=entry.namespace, reason="restore")
    return entry
