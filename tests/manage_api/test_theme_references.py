"""A theme lists entries that exist and are served (QA: a theme listing a retired or unknown ID passed
review, then the ID vanished from its file without a word to anyone)."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.actors import Actor
from knowledge.models import TextKind, TextVersion, VersionState
from knowledge.services.content import ContentReferenceError
from knowledge.services.entries import entry_retire
from knowledge.services.texts import text_approve, text_draft
from tests.manage_api.routes import BASE
from tests.manage_api.test_reference_validation import refused_with

pytestmark = pytest.mark.django_db


def propose(world: Any, *entries: str) -> Any:
    """Create the theme `budgets` listing `entries` (its first draft)."""
    return world.callers["editor_a"].post(
        BASE + "themes/", {"key": "budgets", "title": "Token budgets", "entries": list(entries)}
    )


def test_a_theme_listing_an_id_nobody_wrote_is_refused_naming_it(world: Any) -> None:
    response = propose(world, world.live.entry.public_id, "AL-999")

    message = refused_with(response, "entries.unknown")
    assert "AL-999" in message and world.live.entry.public_id not in message


def test_a_theme_listing_another_tenants_entry_is_refused(world: Any) -> None:
    assert "BE-" in refused_with(propose(world, world.beta_live.entry.public_id), "entries.unknown")


def test_a_theme_listing_a_retired_entry_is_refused(world: Any) -> None:
    entry = world.live.entry
    entry_retire(entry=entry, actor=world.callers["reviewer_a"].user, reason="Superseded")

    assert entry.public_id in refused_with(propose(world, entry.public_id), "entries.retired")


def test_a_theme_with_a_draft_entry_is_kept_and_an_entry_retired_in_review_stops_its_approval(world: Any) -> None:
    editor: Actor = world.callers["editor_a"].user
    listed = [world.live.entry.public_id, world.draft.entry.public_id]
    response = propose(world, *listed)
    assert response.status_code == 201, response.content
    version = TextVersion.objects.get(text__key="budgets")
    assert version.content["entries"] == listed
    world.callers["editor_a"].post(BASE + f"text-versions/{version.pk}/submit/")

    entry_retire(entry=world.live.entry, actor=world.callers["reviewer_a"].user, reason="Superseded")

    with pytest.raises(ContentReferenceError, match="has been retired"):
        text_approve(version=version, actor=world.callers["reviewer_a"].user)
    version.refresh_from_db()
    assert version.state == VersionState.IN_REVIEW
    assert text_draft(namespace=world.alpha, kind=TextKind.THEME, key="other", actor=editor).content["entries"] == []
