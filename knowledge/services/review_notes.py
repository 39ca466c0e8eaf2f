"""Notes on a version's review thread: any member of the namespace may add one; the state never moves."""

from __future__ import annotations

from typing import Final

from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import NOT_A_MEMBER, InvalidInputError
from knowledge.models import EntryVersion, SynonymVersion, TextVersion
from knowledge.selectors.permissions import ROLE_PHRASES, namespace_roles_get
from knowledge.selectors.reviews import SYNONYM_PREFIX, ReviewedVersion, version_namespace
from knowledge.services.access import refusal
from knowledge.services.audit import audit_record

NOTE_MAX: Final = 5000
EMPTY_NOTE: Final = "Write the comment first: an empty note says nothing."


@transaction.atomic
def review_comment(*, version: ReviewedVersion, actor: Actor, note: str) -> None:
    """Add `note` to the thread of an entry version, reviewed text version or synonym set version."""
    note = note.strip()
    if not note:
        raise InvalidInputError(EMPTY_NOTE)
    if len(note) > NOTE_MAX:
        raise InvalidInputError(f"A note is at most {NOTE_MAX} characters; this one has {len(note)}.")
    namespace = version_namespace(version)
    if not namespace_roles_get(user=actor).has(namespace.pk):
        message = NOT_A_MEMBER.format(role=ROLE_PHRASES[None], namespace=namespace.slug)
        raise refusal(message, reason="missing_role", actor=actor, namespace=namespace)
    if isinstance(version, SynonymVersion):
        audit_record(
            namespace=namespace,
            actor=actor,
            action=f"{SYNONYM_PREFIX}comment",
            from_state=version.state,
            to_state=version.state,
            note=note,
            field="synonym_set",
            new_value={"set": version.synonym_set.name, "version": version.number, "phrases": version.phrases},
        )
        return
    entry_version = version if isinstance(version, EntryVersion) else None
    audit_record(
        namespace=namespace,
        actor=actor,
        action="comment",
        entry=entry_version.entry if entry_version is not None else None,
        version=entry_version,
        text_version=version if isinstance(version, TextVersion) else None,
        from_state=version.state,
        to_state=version.state,
        note=note,
    )
