"""What every member of a namespace reads about a reviewed version, whatever it versions.

Entries, reviewed texts (prompt packs, doc pages, the namespace profile) and synonym sets all keep
numbered versions of one subject with the same states and people; these selectors find a version's
subject, its siblings, what it is compared with by default and its review thread, for any of them.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from knowledge.models import AuditRecord, EntryVersion, Namespace, SynonymVersion, TextVersion, VersionState

ReviewedVersion = EntryVersion | TextVersion | SynonymVersion

# The foreign key from each version model to the thing it versions.
SUBJECT_FIELDS: dict[type[Any], str] = {EntryVersion: "entry", TextVersion: "text", SynonymVersion: "synonym_set"}
# Audit actions that belong in a review thread (edits and builds are in the audit trail, not the conversation).
THREAD_VERBS = {
    "create": "opened the draft",
    "submit": "submitted it for review",
    "approve": "approved it",
    "reject": "rejected it",
    "publish": "published it",
    "withdraw": "withdrew it",
    "comment": "commented",
    "supersede": "superseded it",
}
SYNONYM_PREFIX = "synonyms_"  # synonym sets' audit actions are named synonyms_<action>


def version_subject(version: ReviewedVersion) -> Any:
    """The entry, reviewed text or synonym set the version belongs to."""
    return getattr(version, SUBJECT_FIELDS[type(version)])


def version_namespace(version: ReviewedVersion) -> Namespace:
    namespace: Namespace = version_subject(version).namespace
    return namespace


def version_siblings(version: ReviewedVersion) -> QuerySet[Any]:
    """Every version of the same subject, newest first, with who wrote and reviewed each (one query)."""
    field = SUBJECT_FIELDS[type(version)]
    return (
        type(version)
        .objects.filter(**{f"{field}_id": getattr(version, f"{field}_id")})
        .select_related("author", "reviewer")
        .order_by("-number")
    )


def version_baseline(version: ReviewedVersion) -> Any:
    """What a version is compared with by default: the live version, or for the live one its predecessor."""
    live = version_subject(version).live_version
    if live is not None and live.pk != version.pk:
        return live
    published = (VersionState.PUBLISHED, VersionState.SUPERSEDED)
    return version_siblings(version).filter(number__lt=version.number, state__in=published).first()


def version_audit_lookup(version: ReviewedVersion) -> dict[str, Any]:
    """How the audit trail names this version (synonym sets are named by set name and number)."""
    if isinstance(version, EntryVersion):
        return {"version": version}
    if isinstance(version, TextVersion):
        return {"text_version": version}
    synonym_set = version.synonym_set
    return {
        "namespace_id": synonym_set.namespace_id,
        "field": "synonym_set",
        "new_value__set": synonym_set.name,
        "new_value__version": version.number,
    }


def review_thread(version: ReviewedVersion) -> list[dict[str, Any]]:
    """The version's transitions and comments, oldest first, each with who said what."""
    actions = [*THREAD_VERBS, *(SYNONYM_PREFIX + action for action in THREAD_VERBS)]
    records = (
        AuditRecord.objects.filter(action__in=actions, **version_audit_lookup(version))
        .select_related("actor")
        .order_by("created_at", "id")
    )
    thread = []
    for record in records:
        action = record.action.removeprefix(SYNONYM_PREFIX)
        thread.append(
            {
                "who": record.actor.get_username() if record.actor else "Evergreen",
                "verb": THREAD_VERBS[action],
                "action": action,
                "note": record.note,
                "at": record.created_at,
            }
        )
    return thread
