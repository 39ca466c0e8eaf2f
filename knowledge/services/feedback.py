"""Agent feedback (issue 4, MCP ``submit_feedback``): untrusted text queued for the editors, never published."""

from __future__ import annotations

from typing import Final

from django.db import transaction

from knowledge.actors import Actor
from knowledge.errors import InvalidInputError
from knowledge.models import Entry, EntryVersion, Feedback, Namespace, Role
from knowledge.safety import scan_fields
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.review_notes import review_comment
from knowledge.services.safety import namespace_allowed_hosts
from knowledge.services.versions import version_draft_for_entry

MESSAGE_MAX: Final = 2000  # Feedback.message
QUERY_MAX: Final = 500  # Feedback.query
ENTRY_ID_MAX: Final = 32  # Feedback.entry_public_id
SOURCE_MAX: Final = 32  # Feedback.source

MESSAGE_EMPTY: Final = "Say what is wrong: the feedback message is empty."
KIND_UNKNOWN: Final = "Feedback kind must be one of: {kinds}."
STATUS_UNKNOWN: Final = "Feedback status must be one of: {statuses}."


def _untrusted(text: str, limit: int) -> str:
    """Stored as sent, cut to the column's length; NUL is the one character PostgreSQL text cannot hold."""
    return text.replace("\x00", "\ufffd")[:limit]


@transaction.atomic
def feedback_submit(
    *,
    namespace: Namespace,
    kind: str,
    message: str,
    entry_public_id: str | None = None,
    query: str | None = None,
    source: str = "mcp",
) -> Feedback:
    """Queue one report in the namespace's review queue (admin: Feedback, status open).

    The text is untrusted: it is stored as-is (length-capped) with its safety scan's findings, shown
    to editors as plain text with the findings marked, and nothing here touches entries, versions or
    releases — an editor acts on it through review. Rate
    limits are per caller and so belong to the request layer (``mcp_bridge.backend``), which knows who
    is asking; the domain cannot import it (import-linter).
    """
    if kind not in Feedback.Kind.values:
        raise InvalidInputError(KIND_UNKNOWN.format(kinds=", ".join(Feedback.Kind.values)))
    if not message.strip():
        raise InvalidInputError(MESSAGE_EMPTY)
    message, query = _untrusted(message, MESSAGE_MAX), _untrusted(query or "", QUERY_MAX)
    findings = scan_fields(
        {"message": message, "query": query}, allowed_hosts=namespace_allowed_hosts(namespace=namespace)
    )
    return Feedback.objects.create(
        namespace=namespace,
        kind=kind,
        message=message,
        entry_public_id=_untrusted((entry_public_id or "").strip().upper(), ENTRY_ID_MAX),
        query=query,
        source=_untrusted(source, SOURCE_MAX),
        findings=[finding.as_dict() for finding in findings],
    )


@transaction.atomic
def feedback_set_status(*, feedback: Feedback, status: str, actor: Actor) -> Feedback:
    """Mark a report handled, dismissed or open again; needs the editor role of its namespace, audited."""
    if status not in Feedback.Status.values:
        raise InvalidInputError(STATUS_UNKNOWN.format(statuses=", ".join(Feedback.Status.values)))
    locked = Feedback.objects.select_for_update().select_related("namespace").get(pk=feedback.pk)
    require_role(user=actor, namespace=locked.namespace, role=Role.EDITOR)
    old = locked.status
    if old == status:
        return locked
    locked.status = status
    locked.save(update_fields=["status"])
    audit_record(
        namespace=locked.namespace,
        actor=actor,
        action="feedback-status",
        field="status",
        old_value=old,
        new_value=status,
        note=f"feedback #{locked.pk} ({locked.kind}): {old} → {status}",
    )
    return locked


@transaction.atomic
def feedback_draft_open(*, feedback: Feedback, actor: Actor) -> EntryVersion | None:
    """A report about an entry becomes that entry's draft in one step: the report is quoted on the draft's review
    thread and marked handled. None when the report names no entry of its namespace (the editor writes a new one).
    """
    locked = Feedback.objects.select_for_update().select_related("namespace").get(pk=feedback.pk)
    require_role(user=actor, namespace=locked.namespace, role=Role.EDITOR)
    entry = Entry.objects.filter(namespace=locked.namespace, public_id=locked.entry_public_id).first()
    if not locked.entry_public_id or entry is None:
        return None
    draft = version_draft_for_entry(entry=entry, actor=actor)
    quoted = f"Agent feedback #{locked.pk} ({locked.get_kind_display().lower()}): {locked.message}"
    if locked.query:
        quoted += f"\nAsked: {locked.query}"
    review_comment(version=draft, actor=actor, note=quoted)
    feedback_set_status(feedback=locked, status=Feedback.Status.DONE, actor=actor)
    return draft
