"""Golden questions written outside the admin (the management API): validated, editor-only, audited."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from django.db import transaction

from knowledge.errors import InvalidInputError
from knowledge.ids import ID_PATTERN
from knowledge.models import Entry, GoldenQuestion, Namespace, Role
from knowledge.selectors.layers import layers_below
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.content import ContentReferenceError, reference_prefixes

KEY_TAKEN: Final = "The key “{key}” is already used by another golden question of this namespace."
GRADES: Final = (1, 2)
BAD_RELEVANT: Final = "relevant maps entry IDs to a grade: 2 for the answer, 1 for related ({} = not covered)."
RELEVANT_NOT_AN_ID: Final = "relevant: “{value}” is not an entry ID (such as EG-202)."
RELEVANT_FOREIGN: Final = (
    "relevant: {id} is not an ID of this namespace or of one it builds on (IDs starting {prefixes})."
)
RELEVANT_TWICE: Final = "relevant names {id} twice (“{first}” and “{second}”); give each entry one grade."
RELEVANT_UNKNOWN: Final = (
    "relevant: {ids} is no entry of this namespace or of one it builds on; a golden question expects existing entries."
)
UNKNOWN_LISTED = 5  # IDs a refusal names; the rest are "…"


def relevant_id_normalize(value: str) -> str:
    """A key of `relevant`, upper-cased; raises ValueError naming it when it is not an entry ID."""
    public_id = value.strip().upper()
    if not ID_PATTERN.match(public_id):
        raise ValueError(RELEVANT_NOT_AN_ID.format(value=public_id[:40]))
    return public_id


def relevant_normalize(relevant: Mapping[str, Any]) -> dict[str, Any]:
    """`relevant` with its IDs upper-cased, grades as given; raises ValueError naming a key that is not an
    entry ID, or an ID named twice (BT-000 and bt-000: one of the two grades would be lost without a word)."""
    cleaned: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, grade in relevant.items():
        public_id = relevant_id_normalize(str(key))
        if public_id in cleaned:
            raise ValueError(RELEVANT_TWICE.format(id=public_id, first=spelled[public_id], second=str(key)[:40]))
        cleaned[public_id] = grade
        spelled[public_id] = str(key)[:40]
    return cleaned


def golden_relevant_clean(*, namespace: Namespace, relevant: Mapping[str, Any]) -> dict[str, int]:
    """The graded IDs, each an entry of the namespace or of a base (its own or a base's prefix).

    A retired entry may be expected (an older release served it: history), and so may one not yet
    published (the question is written ahead of it), as a theme may list one; an ID that names no entry
    at all (a typo) could never be packed, so it is refused.
    """
    if not all(type(grade) is int and grade in GRADES for grade in relevant.values()):
        raise InvalidInputError(BAD_RELEVANT)
    try:
        cleaned: dict[str, int] = relevant_normalize(relevant)
    except ValueError as error:
        raise InvalidInputError(str(error)) from error
    prefixes = reference_prefixes(namespace=namespace)
    for public_id in cleaned:
        if public_id.split("-", 1)[0] not in prefixes:
            joined = ", ".join(f"{prefix}-" for prefix in prefixes)
            raise InvalidInputError(RELEVANT_FOREIGN.format(id=public_id, prefixes=joined))
    readable = [namespace, *layers_below(namespace=namespace)]
    entries = Entry.objects.filter(namespace__in=readable, public_id__in=list(cleaned))
    known = set(entries.values_list("public_id", flat=True))
    unknown = [public_id for public_id in cleaned if public_id not in known]
    if unknown:
        listed = ", ".join(unknown[:UNKNOWN_LISTED]) + (", …" if len(unknown) > UNKNOWN_LISTED else "")
        raise ContentReferenceError(RELEVANT_UNKNOWN.format(ids=listed), code="relevant.unknown")
    return cleaned


@transaction.atomic
def golden_question_create(
    *, namespace: Namespace, key: str, text: str, relevant: dict[str, Any], split: str, actor: Any
) -> GoldenQuestion:
    """Add a question with the entries that answer it; it is evaluated with the namespace's others."""
    require_role(user=actor, namespace=namespace, role=Role.EDITOR)
    key, text = key.strip(), text.strip()
    if not key or not text:
        raise InvalidInputError("A golden question needs a key and a text.")
    cleaned = golden_relevant_clean(namespace=namespace, relevant=relevant)
    if GoldenQuestion.objects.filter(namespace=namespace, key=key).exists():
        raise InvalidInputError(KEY_TAKEN.format(key=key))
    question = GoldenQuestion.objects.create(namespace=namespace, key=key, text=text, relevant=cleaned, split=split)
    audit_record(namespace=namespace, actor=actor, action="golden-create", note=f"{key}: {text[:200]}")
    return question
