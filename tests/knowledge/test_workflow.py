"""The review workflow: transitions, four eyes, optimistic locking, one live version, the audit trail."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction

from knowledge.errors import SELF_APPROVAL, ConflictError, NotAllowedError
from knowledge.models import AuditRecord, EntryVersion, Namespace, VersionState
from knowledge.services.entries import entry_create
from knowledge.services.versions import (
    version_approve,
    version_draft_for_entry,
    version_publish,
    version_reject,
    version_save,
    version_submit,
    version_withdraw,
)
from knowledge.workflow import ROLLBACK_TRANSITIONS, TransitionError, check_transition
from tests.factories import content

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(ns_a: Namespace, editor: Any) -> EntryVersion:
    return entry_create(namespace=ns_a, category=ns_a.categories.get(slug="rule"), content=content(), actor=editor)


def publish(version: EntryVersion, editor: Any, reviewer: Any) -> EntryVersion:
    version_submit(version=version, actor=editor)
    version_approve(version=version, actor=reviewer)
    return version_publish(version=version, actor=reviewer)


def test_the_whole_cycle_goes_live_and_is_audited(draft: EntryVersion, editor: Any, reviewer: Any) -> None:
    live = publish(draft, editor, reviewer)
    live.entry.refresh_from_db()
    assert live.state == VersionState.PUBLISHED
    assert live.entry.live_version_id == live.pk
    trail = list(
        AuditRecord.objects.filter(version=live).order_by("pk").values_list("action", "from_state", "to_state")
    )
    assert trail == [
        ("create", "", "draft"),
        ("submit", "draft", "in_review"),
        ("approve", "in_review", "approved"),
        ("publish", "approved", "published"),
    ]
    assert AuditRecord.objects.filter(version=live, action="approve", actor=reviewer).exists()


def test_publish_rejects_self_approval(draft: EntryVersion, editor: Any, reviewer: Any) -> None:
    reviewer.memberships.create(namespace=draft.entry.namespace, role="editor")
    own = version_draft_for_entry(entry=publish(draft, editor, reviewer).entry, actor=reviewer)
    version_submit(version=own, actor=reviewer)
    with pytest.raises(NotAllowedError, match="four eyes"):
        version_approve(version=own, actor=reviewer)
    own.refresh_from_db()
    assert own.state == VersionState.IN_REVIEW
    assert str(SELF_APPROVAL).startswith("You wrote or edited this version")


def test_single_person_mode_allows_self_approval(draft: EntryVersion, editor: Any, ns_a: Namespace) -> None:
    ns_a.allow_self_approval = True
    ns_a.save()
    editor.memberships.create(namespace=ns_a, role="reviewer")
    version_submit(version=draft, actor=editor)
    assert version_approve(version=draft, actor=editor).state == VersionState.APPROVED


def test_an_editor_cannot_approve(draft: EntryVersion, editor: Any, outsider: Any) -> None:
    version_submit(version=draft, actor=editor)
    with pytest.raises(NotAllowedError, match="reviewer"):
        version_approve(version=draft, actor=outsider)


def test_a_refused_transition_says_why_and_changes_nothing(draft: EntryVersion, reviewer: Any) -> None:
    with pytest.raises(TransitionError) as caught:
        version_publish(version=draft, actor=reviewer)
    assert str(caught.value) == "A version that is draft cannot be published: allowed from approved."
    draft.refresh_from_db()
    assert draft.state == VersionState.DRAFT
    assert not AuditRecord.objects.filter(version=draft, action="publish").exists()


@pytest.mark.parametrize(
    ("current", "target"),
    [
        ("draft", "approved"),
        ("draft", "published"),
        ("rejected", "in_review"),
        ("published", "draft"),
        ("superseded", "published"),
        ("withdrawn", "in_review"),
        ("approved", "withdrawn"),
    ],
)
def test_transition_table_refuses(current: str, target: str) -> None:
    with pytest.raises(TransitionError):
        check_transition(current, target)


def test_only_a_rollback_brings_a_superseded_version_back() -> None:
    assert check_transition("superseded", "published", table=ROLLBACK_TRANSITIONS) == "revert"
    with pytest.raises(TransitionError, match=r"allowed from approved\.$"):
        check_transition("superseded", "published")


def test_reject_needs_a_note_and_ends_the_version(draft: EntryVersion, editor: Any, reviewer: Any) -> None:
    version_submit(version=draft, actor=editor)
    rejected = version_reject(version=draft, actor=reviewer, note="Cite the source of the 31% figure.")
    assert rejected.state == VersionState.REJECTED
    assert rejected.review_note.startswith("Cite")
    again = version_draft_for_entry(entry=draft.entry, actor=editor)
    assert again.number == 2
    assert again.body == draft.body  # the rejected text is the starting point of the next draft


def test_editing_a_published_entry_makes_a_draft_and_the_live_version_keeps_serving(
    draft: EntryVersion, editor: Any, reviewer: Any
) -> None:
    live = publish(draft, editor, reviewer)
    new = version_draft_for_entry(entry=live.entry, actor=editor)
    version_save(version=new, content=content(title="Budget rules, revised"), expected_lock_version=0, actor=editor)
    live.entry.refresh_from_db()
    assert live.entry.live_version_id == live.pk
    assert EntryVersion.objects.get(pk=live.pk).title == "Token budget discipline"
    publish(new, editor, reviewer)
    live.refresh_from_db()
    assert live.state == VersionState.SUPERSEDED


def test_at_most_one_published_version_per_entry_is_a_database_constraint(
    draft: EntryVersion, editor: Any, reviewer: Any
) -> None:
    live = publish(draft, editor, reviewer)
    other = version_draft_for_entry(entry=live.entry, actor=editor)
    with pytest.raises(IntegrityError), transaction.atomic():
        EntryVersion.objects.filter(pk=other.pk).update(state=VersionState.PUBLISHED)


def test_a_second_save_of_the_same_draft_is_a_conflict(draft: EntryVersion, editor: Any) -> None:
    version_save(version=draft, content=content(body="First person's text."), expected_lock_version=0, actor=editor)
    with pytest.raises(ConflictError, match="Someone else saved this draft"):
        version_save(
            version=draft, content=content(body="Second person's text."), expected_lock_version=0, actor=editor
        )
    draft.refresh_from_db()
    assert draft.body == "First person's text."
    assert draft.lock_version == 1


def test_withdraw_from_review(draft: EntryVersion, editor: Any) -> None:
    version_submit(version=draft, actor=editor)
    assert version_withdraw(version=draft, actor=editor).state == VersionState.WITHDRAWN


def test_tokens_and_hash_follow_the_content(draft: EntryVersion, editor: Any) -> None:
    saved = version_save(version=draft, content=content(body="预算" * 50), expected_lock_version=0, actor=editor)
    assert saved.tokens == content(body="预算" * 50).tokens
    assert saved.content_hash != draft.content_hash
