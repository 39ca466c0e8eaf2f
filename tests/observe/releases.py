"""Helpers that give the alpha namespace a history of releases: a change and an addition, a retirement."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from knowledge.models import Entry, Namespace
from knowledge.selectors.serving import serving_caches_clear
from knowledge.services.entries import entry_retire
from knowledge.services.releases import release_build
from tests.servingfixtures import BUILT_AT, alpha_rows, publish

SECOND_BUILT = BUILT_AT + timedelta(days=1)
THIRD_BUILT = BUILT_AT + timedelta(days=2)


def second_rows() -> list[dict[str, Any]]:
    rows = alpha_rows()
    rows[1] = {**rows[1], "summary": "Alpha costs nothing for agents, and 5 euros a month for people."}
    new = {"id": "AL-003", "category": "fact", "title": "Alpha support hours", "body": "Support answers 9 to 17."}
    return [*rows, new]


def second_release(alpha: Namespace) -> Namespace:
    """Release 2: AL-002 changed, AL-003 added."""
    publish(alpha, second_rows(), now=SECOND_BUILT)
    serving_caches_clear()
    return alpha


def retire_and_build(alpha: Namespace, public_id: str, *, replaced_by: str = "") -> Namespace:
    entry = Entry.objects.get(namespace=alpha, public_id=public_id)
    entry_retire(entry=entry, actor=None, reason="Superseded.", replaced_by=replaced_by, check_permission=False)
    release_build(namespace_id=alpha.pk, now=THIRD_BUILT)
    alpha.refresh_from_db()
    serving_caches_clear()
    return alpha
