"""Append-only audit records; each names who acted (a person, or the system actor for work no person did)."""

from __future__ import annotations

from typing import Any

from knowledge.actors import Actor, actor_user
from knowledge.models import AuditRecord, Entry, EntryVersion, Namespace, Release, TextVersion
from knowledge.services.actors import system_actor


def audit_record(
    *,
    namespace: Namespace,
    actor: Actor,
    action: str,
    entry: Entry | None = None,
    version: EntryVersion | None = None,
    text_version: TextVersion | None = None,
    release: Release | None = None,
    from_state: str = "",
    to_state: str = "",
    note: str = "",
    field: str = "",
    old_value: Any = None,
    new_value: Any = None,
) -> AuditRecord:
    return AuditRecord.objects.create(
        namespace=namespace,
        actor=actor_user(actor) or system_actor(),
        action=action,
        entry=entry,
        version=version,
        text_version=text_version,
        release=release,
        from_state=from_state,
        to_state=to_state,
        note=note,
        field=field,
        old_value=old_value,
        new_value=new_value,
    )
