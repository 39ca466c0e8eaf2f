"""Golden questions written outside the admin (the management API): validated, editor-only, audited."""

from __future__ import annotations

from typing import Any, Final

from django.db import transaction

from knowledge.errors import InvalidInputError
from knowledge.models import GoldenQuestion, Namespace, Role
from knowledge.services.access import require_role
from knowledge.services.audit import audit_record

KEY_TAKEN: Final = "The key “{key}” is already used by another golden question of this namespace."
GRADES: Final = (1, 2)
BAD_RELEVANT: Final = "relevant maps entry IDs to a grade: 2 for the answer, 1 for related ({{}} = not covered)."


@transaction.atomic
def golden_question_create(
    *, namespace: Namespace, key: str, text: str, relevant: dict[str, Any], split: str, actor: Any
) -> GoldenQuestion:
    """Add a question with the entries that answer it; it is evaluated with the namespace's others."""
    require_role(user=actor, namespace=namespace, role=Role.EDITOR)
    key, text = key.strip(), text.strip()
    if not key or not text:
        raise InvalidInputError("A golden question needs a key and a text.")
    if not all(isinstance(grade, int) and grade in GRADES for grade in relevant.values()):
        raise InvalidInputError(BAD_RELEVANT)
    if GoldenQuestion.objects.filter(namespace=namespace, key=key).exists():
        raise InvalidInputError(KEY_TAKEN.format(key=key))
    cleaned = {public_id.strip().upper(): grade for public_id, grade in relevant.items()}
    question = GoldenQuestion.objects.create(namespace=namespace, key=key, text=text, relevant=cleaned, split=split)
    audit_record(namespace=namespace, actor=actor, action="golden-create", note=f"{key}: {text[:200]}")
    return question
