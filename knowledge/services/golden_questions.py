"""Golden questions written outside the admin (the management API): validated, editor-only, audited."""

from __future__ import annotations

from typing import Any, Final

from django.db import transaction

from knowledge.errors import InvalidInputError
from knowledge.ids import ID_PATTERN
from knowledge.models import GoldenQuestion, Namespace, Role
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record
from knowledge.services.content import reference_prefixes

KEY_TAKEN: Final = "The key “{key}” is already used by another golden question of this namespace."
GRADES: Final = (1, 2)
BAD_RELEVANT: Final = "relevant maps entry IDs to a grade: 2 for the answer, 1 for related ({{}} = not covered)."
RELEVANT_NOT_AN_ID: Final = "relevant: “{value}” is not an entry ID (such as EG-202)."
RELEVANT_FOREIGN: Final = (
    "relevant: {id} is not an ID of this namespace or of one it builds on (IDs starting {prefixes})."
)


def relevant_id_normalize(value: str) -> str:
    """A key of `relevant`, upper-cased; raises ValueError naming it when it is not an entry ID."""
    public_id = value.strip().upper()
    if not ID_PATTERN.match(public_id):
        raise ValueError(RELEVANT_NOT_AN_ID.format(value=public_id[:40]))
    return public_id


def _relevant_cleaned(*, namespace: Namespace, relevant: dict[str, Any]) -> dict[str, int]:
    """The graded IDs, each one the namespace's release can serve (its own or a base's prefix)."""
    if not all(type(grade) is int and grade in GRADES for grade in relevant.values()):
        raise InvalidInputError(BAD_RELEVANT)
    prefixes = reference_prefixes(namespace=namespace)
    cleaned: dict[str, int] = {}
    for key, grade in relevant.items():
        try:
            public_id = relevant_id_normalize(str(key))
        except ValueError as error:
            raise InvalidInputError(str(error)) from error
        if public_id.split("-", 1)[0] not in prefixes:
            joined = ", ".join(f"{prefix}-" for prefix in prefixes)
            raise InvalidInputError(RELEVANT_FOREIGN.format(id=public_id, prefixes=joined))
        cleaned[public_id] = grade
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
    cleaned = _relevant_cleaned(namespace=namespace, relevant=relevant)
    if GoldenQuestion.objects.filter(namespace=namespace, key=key).exists():
        raise InvalidInputError(KEY_TAKEN.format(key=key))
    question = GoldenQuestion.objects.create(namespace=namespace, key=key, text=text, relevant=cleaned, split=split)
    audit_record(namespace=namespace, actor=actor, action="golden-create", note=f"{key}: {text[:200]}")
    return question
