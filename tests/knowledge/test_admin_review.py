"""The review pages: what a version shows (diff, preview, warnings) and what its buttons do."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from knowledge.models import EntryVersion, Feedback, Namespace, VersionState
from knowledge.services.entries import entry_create
from tests.factories import content

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(ns_a: Namespace, editor: Any) -> EntryVersion:
    return entry_create(
        namespace=ns_a,
        category=ns_a.categories.get(slug="rule"),
        content=content(confidence="0.70", updated=date(2020, 1, 1), links=["AL-999"]),
        actor=editor,
    )


def as_user(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_draft_shows_its_cost_preview_diff_and_warnings(editor: Any, draft: EntryVersion) -> None:
    page = as_user(editor).get(reverse("admin:knowledge_entryversion_change", args=[draft.pk])).text
    assert f"<strong>{draft.tokens} tokens</strong>" in page
    assert "(new entry)" in page  # the diff against a live version that does not exist yet
    assert "below 0.80" in page
    assert "more than 12 months ago" in page
    assert "Link AL-999 points to no entry" in page
    assert "Submit for review" in page


def test_buttons_move_the_version_and_refusals_say_why(editor: Any, reviewer: Any, draft: EntryVersion) -> None:
    transition = reverse("admin:knowledge_entryversion_transition", args=[draft.pk, "submit"])
    as_user(editor).post(transition, {"note": ""})
    draft.refresh_from_db()
    assert draft.state == VersionState.IN_REVIEW

    approve = reverse("admin:knowledge_entryversion_transition", args=[draft.pk, "approve"])
    response = as_user(editor).post(approve, {"note": ""}, follow=True)
    assert "You are not a reviewer of the namespace" in response.text
    draft.refresh_from_db()
    assert draft.state == VersionState.IN_REVIEW

    publish = reverse("admin:knowledge_entryversion_transition", args=[draft.pk, "publish"])
    response = as_user(reviewer).post(publish, {"note": ""}, follow=True)
    assert "A version that is in review cannot be published: allowed from approved." in response.text


def test_the_review_queue_lists_others_versions_in_review(editor: Any, reviewer: Any, draft: EntryVersion) -> None:
    queue = reverse("admin:knowledge_reviewitem_changelist")
    assert draft.entry.public_id not in as_user(reviewer).get(queue).text
    as_user(editor).post(reverse("admin:knowledge_entryversion_transition", args=[draft.pk, "submit"]))
    assert draft.entry.public_id in as_user(reviewer).get(queue).text


def test_agent_feedback_waits_in_the_reviewers_queue_escaped(
    reviewer: Any, outsider: Any, ns_a: Namespace, ns_b: Namespace
) -> None:
    Feedback.objects.create(namespace=ns_a, kind="outdated", entry_public_id="AL-200", message="<script>x</script> old")
    Feedback.objects.create(namespace=ns_b, kind="missing", message="Beta-only report")
    page = as_user(reviewer).get(reverse("admin:knowledge_reviewitem_changelist")).text
    assert "Agent feedback waiting (1)" in page
    assert "&lt;script&gt;x&lt;/script&gt; old" in page
    assert "<script>x</script>" not in page
    assert "Beta-only report" not in page


def test_an_editor_types_aliases_in_the_draft_form_and_the_preview_shows_them(editor: Any, draft: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])
    form = {
        "title": draft.title,
        "summary": draft.summary,
        "body": draft.body,
        "tags": ", ".join(draft.tags),
        "aliases": "Token budget, 预算纪律，choosing a budget",
        "confidence": str(draft.confidence),
        "links": "",
        "updated": draft.updated.isoformat(),
        "based_on": str(draft.lock_version),
    }

    response = as_user(editor).post(url, form)

    assert response.status_code == 302, response.text
    draft.refresh_from_db()
    assert draft.aliases == ["Token budget", "预算纪律", "choosing a budget"]
    page = as_user(editor).get(url).text
    assert "Also found as: <strong>Token budget, 预算纪律, choosing a budget</strong>" in page
    assert '<section class="eg-diff-field" aria-label="aliases">' in page  # a new entry: every field is new
