"""Review pages by role: every field's diff, the history and thread for every member, only the buttons one may use."""

from __future__ import annotations

from typing import Any

import pytest
from django.urls import reverse

from knowledge.models import AuditRecord, EntryVersion, Namespace, VersionState
from knowledge.services.entries import entry_create
from knowledge.services.versions import version_reject
from tests.admin_ui.conftest import as_user
from tests.factories import content

pytestmark = pytest.mark.django_db


def page_of(user: Any, version: EntryVersion) -> str:
    response = as_user(user).get(reverse("admin:knowledge_entryversion_change", args=[version.pk]))
    assert response.status_code == 200
    return response.text


def test_the_reviewer_sees_word_changes_history_and_only_review_buttons(reviewer: Any, revision: EntryVersion) -> None:
    page = page_of(reviewer, revision)
    assert "From <strong>v1 (published)</strong> to <strong>v2 (in review)</strong>" in page
    assert "<del>raise</del>" in page and "<ins>double</ins>" in page  # word-level, both sides
    assert "A second paragraph, new in v2." in page
    assert 'aria-label="tags"' in page and 'aria-label="title"' not in page  # unchanged fields are named, not drawn
    assert "unchanged: title, summary, aliases, confidence, links, updated, sensitivity, valid_until" in page
    assert 'class="evergreen-approve"' in page and 'class="evergreen-reject"' in page
    assert 'name="_save"' not in page  # read-only: no Save buttons
    assert "evergreen-submit" not in page and "evergreen-withdraw" not in page  # an editor's buttons
    assert 'id="history"' in page and "v1 → v2" in page
    assert '<span class="eg-chip">new</span>' in page  # list fields read as chips, not JSON
    assert f'<div class="readonly">{revision.updated.isoformat()}</div>' in page  # ISO dates


def test_the_editor_sees_no_review_buttons_and_cannot_edit_a_version_in_review(
    editor: Any, revision: EntryVersion
) -> None:
    page = page_of(editor, revision)
    assert "evergreen-approve" not in page and "evergreen-publish" not in page
    assert 'class="evergreen-withdraw"' in page
    assert 'name="_save"' not in page  # in review: the text is frozen


def test_the_author_who_also_reviews_is_not_offered_approve(
    ns_a: Namespace, editor: Any, revision: EntryVersion
) -> None:
    from knowledge.models import Role
    from tests.factories import membership

    membership(editor, ns_a, Role.REVIEWER)
    page = page_of(editor, revision)
    assert "evergreen-approve" not in page
    assert "another reviewer approves it (four eyes)" in page
    assert 'class="evergreen-reject"' in page


def test_submit_in_the_draft_form_saves_the_edits_first(editor: Any, ns_a: Namespace) -> None:
    draft = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)
    form = {
        "title": "Token budgets, retitled before submitting",
        "summary": draft.summary,
        "body": draft.body,
        "tags": ", ".join(draft.tags),
        "aliases": "",
        "confidence": str(draft.confidence),
        "links": "",
        "updated": draft.updated.isoformat(),
        "based_on": str(draft.lock_version),
        "note": "Ready.",
        "_transition": "submit",
    }
    url = reverse("admin:knowledge_entryversion_change", args=[draft.pk])
    response = as_user(editor).post(url, form, follow=True)
    draft.refresh_from_db()
    assert draft.state == VersionState.IN_REVIEW
    assert draft.title == "Token budgets, retitled before submitting"
    assert "saved, then submit done" in response.text
    assert AuditRecord.objects.filter(version=draft, action="submit", note="Ready.").exists()


def test_a_transition_with_an_invalid_form_changes_nothing(editor: Any, ns_a: Namespace) -> None:
    draft = entry_create(namespace=ns_a, category=ns_a.categories.get(slug="fact"), content=content(), actor=editor)
    form = {"title": "", "body": draft.body, "confidence": "0.9", "updated": "2026-08-25", "based_on": "0"}
    response = as_user(editor).post(
        reverse("admin:knowledge_entryversion_change", args=[draft.pk]), {**form, "_transition": "submit"}
    )
    assert response.status_code == 200  # the form again, with its errors
    assert "errornote" in response.text
    draft.refresh_from_db()
    assert draft.state == VersionState.DRAFT


def test_edit_opens_a_draft_only_by_post(editor: Any, live: EntryVersion) -> None:
    url = reverse("admin:knowledge_entry_edit", args=[live.entry_id])
    assert as_user(editor).get(url).status_code == 405
    assert not live.entry.versions.filter(state=VersionState.DRAFT).exists()
    response = as_user(editor).post(url)
    draft = live.entry.versions.get(state=VersionState.DRAFT)
    assert response.status_code == 302 and response["Location"].endswith(f"/entryversion/{draft.pk}/change/")


def test_the_entry_page_offers_edit_to_editors_and_retire_to_reviewers(
    editor: Any, reviewer: Any, live: EntryVersion
) -> None:
    url = reverse("admin:knowledge_entry_change", args=[live.entry_id])
    as_editor, as_reviewer = as_user(editor).get(url).text, as_user(reviewer).get(url).text
    assert 'class="evergreen-edit"' in as_editor and "Retire…" not in as_editor
    assert 'class="evergreen-edit"' not in as_reviewer and "Retire…" in as_reviewer
    assert live.title in as_editor  # the page names the entry, not only its ID
    assert "v1" in as_reviewer  # the version history, for every member


def test_compare_any_two_versions(reviewer: Any, revision: EntryVersion) -> None:
    from_entry = as_user(reviewer).get(reverse("admin:knowledge_entry_compare", args=[revision.entry_id]))
    url = reverse("admin:knowledge_entryversion_compare", args=[revision.pk])
    assert from_entry.status_code == 302 and from_entry["Location"] == url  # the entry's link opens the shared page
    forward = as_user(reviewer).get(url, {"old": 1, "new": 2}).text
    assert "<ins>double</ins>" in forward
    backward = as_user(reviewer).get(url, {"old": 2, "new": 1}).text
    assert "<ins>raise</ins>" in backward and "<del>double</del>" in backward
    wrong = as_user(reviewer).get(url, {"old": "9", "new": "x"}, follow=True).text
    assert "Choose two versions of the same thing from the lists." in wrong


def test_a_rejected_version_shows_its_reason_and_revises_into_a_new_draft(
    editor: Any, reviewer: Any, revision: EntryVersion
) -> None:
    version_reject(version=revision, actor=reviewer, note="Cite the measurement for doubling.")
    page = page_of(editor, revision)
    assert "Rejected by rita" in page and "Cite the measurement for doubling." in page
    response = as_user(editor).post(reverse("admin:knowledge_entryversion_revise", args=[revision.pk]))
    draft = revision.entry.versions.get(state=VersionState.DRAFT)
    assert response.status_code == 302
    assert draft.number == 3 and draft.body == revision.body  # the rejected text, not the live one


def test_revise_is_refused_while_another_version_is_open(
    editor: Any, revision: EntryVersion, live: EntryVersion
) -> None:
    response = as_user(editor).post(reverse("admin:knowledge_entryversion_revise", args=[live.pk]), follow=True)
    assert "already has version 2 in review" in response.text
    assert live.entry.versions.count() == 2


def test_members_add_notes_to_the_review_thread(editor: Any, reviewer: Any, revision: EntryVersion) -> None:
    url = reverse("admin:knowledge_entryversion_comment", args=[revision.pk])
    as_user(reviewer).post(url, {"comment": "Which benchmark says double?"})
    empty = as_user(editor).post(url, {"comment": "  "}, follow=True)
    assert "Write the comment first" in empty.text
    page = page_of(editor, revision)
    assert "<strong>rita</strong> commented" in page and "Which benchmark says double?" in page
    revision.refresh_from_db()
    assert revision.state == VersionState.IN_REVIEW


def test_outsiders_neither_read_nor_comment(outsider: Any, revision: EntryVersion) -> None:
    client = as_user(outsider)
    assert client.get(reverse("admin:knowledge_entryversion_change", args=[revision.pk])).status_code in {302, 404}
    url = reverse("admin:knowledge_entryversion_comment", args=[revision.pk])
    assert client.post(url, {"comment": "hi"}).status_code == 404
    assert not AuditRecord.objects.filter(action="comment").exists()


def test_the_queue_links_each_version_to_its_review_page(reviewer: Any, revision: EntryVersion) -> None:
    page = as_user(reviewer).get(reverse("admin:knowledge_reviewitem_changelist")).text
    review = reverse("admin:knowledge_entryversion_change", args=[revision.pk])
    assert f'<a href="{review}">{revision.entry.public_id} v2</a>' in page
    assert reverse("admin:knowledge_reviewitem_change", args=[revision.pk]) not in page
