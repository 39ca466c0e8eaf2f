"""The review page is one for everything reviewed: prompt packs, doc pages, the profile and synonym sets get the
same word-level diff, history, thread, compare page, buttons by role, save-then-submit and revise as entries."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from knowledge.models import Namespace, Role, SynonymVersion, TextKind, TextVersion, VersionState
from knowledge.retrieval.tokens import estimate_tokens
from knowledge.services.synonyms import (
    SynonymContent,
    synonym_approve,
    synonym_draft,
    synonym_publish,
    synonym_save,
    synonym_set_create,
    synonym_submit,
)
from knowledge.services.texts import text_draft, text_publish_as_system, text_reject, text_save, text_submit
from tests.admin_ui.conftest import as_user
from tests.factories import UserFactory, membership
from tests.knowledge.adminforms import admin_form

pytestmark = pytest.mark.django_db

FIRST = "Answer from ${base_url} and cite entry IDs."
SECOND = "Answer from ${base_url} and cite every fact with its entry ID."


@pytest.fixture
def prompt_in_review(ns_a: Namespace, editor: Any) -> TextVersion:
    """The prompt pack “chat”: v1 published from files, v2 by the editor in review with one phrase reworded."""
    text_publish_as_system(namespace=ns_a, kind=TextKind.PROMPT, key="chat", content={"template": FIRST}, note="t")
    draft = text_draft(namespace=ns_a, kind=TextKind.PROMPT, key="chat", actor=editor)
    text_save(version=draft, content={"template": SECOND}, expected_lock_version=draft.lock_version, actor=editor)
    return text_submit(version=draft, actor=editor)


def _page(user: Any, version: Any, view: str = "change") -> Any:
    return as_user(user).get(reverse(f"admin:knowledge_{version._meta.model_name}_{view}", args=[version.pk]))


def test_a_prompt_packs_reviewer_reads_the_words_that_changed_and_gets_only_review_buttons(
    prompt_in_review: TextVersion, reviewer: Any, editor: Any
) -> None:
    page = _page(reviewer, prompt_in_review).text
    assert "From <strong>v1 (published)</strong> to <strong>v2 (in review)</strong>" in page
    assert "<del>IDs</del>" in page and "<ins>ID</ins>" in page  # word by word, inside the line
    assert "every fact with its" in page.split('class="eg-add"', 1)[1]
    assert 'class="evergreen-approve"' in page and 'class="evergreen-reject"' in page
    assert 'name="_save"' not in page and "evergreen-submit" not in page
    assert 'id="history"' in page and "v1 → v2" in page
    assert "submitted it for review" in page  # the thread, from the audit trail
    as_author = _page(editor, prompt_in_review).text
    assert "evergreen-approve" not in as_author and "evergreen-reject" not in as_author
    assert "evergreen-withdraw" in as_author and 'name="_save"' not in as_author


def test_members_only_see_and_annotate_their_namespaces_texts(
    prompt_in_review: TextVersion, reviewer: Any, outsider: Any
) -> None:
    hidden = (
        as_user(outsider)
        .get(reverse("admin:knowledge_textversion_change", args=[prompt_in_review.pk]), follow=True)
        .text
    )
    assert "Perhaps it was deleted?" in hidden and SECOND not in hidden  # Django’s "not found" for a change page
    url = reverse("admin:knowledge_textversion_comment", args=[prompt_in_review.pk])
    assert as_user(outsider).post(url, {"comment": "hello"}).status_code == 404
    as_user(reviewer).post(url, {"comment": "Why “every fact”? Some answers have none."})
    assert "Why “every fact”? Some answers have none." in _page(reviewer, prompt_in_review).text


def test_a_rejected_text_shows_its_reason_and_is_revised_in_a_new_draft(
    prompt_in_review: TextVersion, reviewer: Any, editor: Any
) -> None:
    text_reject(version=prompt_in_review, actor=reviewer, note="Keep it short.")
    page = _page(editor, prompt_in_review).text
    assert "eg-rejected-note" in page and "Keep it short." in page and "evergreen-revise" in page
    response = as_user(editor).post(reverse("admin:knowledge_textversion_revise", args=[prompt_in_review.pk]))
    draft = TextVersion.objects.get(text=prompt_in_review.text, number=3)
    assert response.status_code == 302 and response["Location"].endswith(f"/{draft.pk}/change/")
    assert draft.state == VersionState.DRAFT and draft.content == {"template": SECOND}
    compare = _page(reviewer, draft, "compare")
    assert compare.status_code == 200 and "From <strong>v2 (rejected)</strong> to <strong>v3 (draft)" in compare.text


def test_submit_on_a_text_draft_saves_what_was_typed_first(ns_a: Namespace, editor: Any) -> None:
    text_publish_as_system(namespace=ns_a, kind=TextKind.PROMPT, key="chat", content={"template": FIRST}, note="t")
    draft = text_draft(namespace=ns_a, kind=TextKind.PROMPT, key="chat", actor=editor)
    url = reverse("admin:knowledge_textversion_change", args=[draft.pk])
    browser = as_user(editor)
    data = admin_form(browser, url)
    data.update({"template": [SECOND], "_transition": ["submit"]})
    assert browser.post(url, data).status_code == 302
    draft.refresh_from_db()
    assert draft.state == VersionState.IN_REVIEW and draft.content == {"template": SECOND}


def test_a_transition_by_get_changes_nothing(prompt_in_review: TextVersion, reviewer: Any) -> None:
    url = reverse("admin:knowledge_textversion_transition", args=[prompt_in_review.pk, "approve"])
    assert as_user(reviewer).get(url).status_code == 405
    prompt_in_review.refresh_from_db()
    assert prompt_in_review.state == VersionState.IN_REVIEW


@pytest.fixture
def synonyms_in_review(ns_a: Namespace, editor: Any, reviewer: Any) -> SynonymVersion:
    """“token budget” v1 published (token budget ⇄ context budget), v2 adding a phrase, in review."""
    first = SynonymContent.build(phrases=["token budget", "context budget"], two_way=True, enabled=True)
    _, v1 = synonym_set_create(namespace=ns_a, name="token budget", content=first, actor=editor)
    synonym_submit(version=v1, actor=editor)
    synonym_approve(version=v1, actor=reviewer)
    synonym_publish(version=v1, actor=reviewer)
    v2 = synonym_draft(synonym_set=v1.synonym_set, actor=editor)
    second = SynonymContent.build(phrases=["token budget", "context budget", "Token 预算"], two_way=True, enabled=True)
    synonym_save(version=v2, content=second, actor=editor)
    return synonym_submit(version=v2, actor=editor)


def test_a_synonym_sets_reviewer_sees_the_added_phrase_and_four_eyes_hides_approve_from_its_author(
    synonyms_in_review: SynonymVersion, reviewer: Any, editor: Any, ns_a: Namespace
) -> None:
    page = _page(reviewer, synonyms_in_review).text
    assert "From <strong>v1 (published)</strong> to <strong>v2 (in review)</strong>" in page
    assert "Token 预算" in page and 'aria-label="phrases"' in page
    assert "evergreen-approve" in page
    # an editor who also reviews still may not approve what they wrote
    membership(synonyms_in_review.author, ns_a, Role.REVIEWER)
    as_author = _page(editor, synonyms_in_review).text
    assert "evergreen-approve" not in as_author and "another reviewer approves it" in as_author
    other = membership(UserFactory(username="rhea"), ns_a, Role.REVIEWER)
    as_author_comment = as_user(other).post(
        reverse("admin:knowledge_synonymversion_comment", args=[synonyms_in_review.pk]), {"comment": "Fine by me."}
    )
    assert as_author_comment.status_code == 302
    assert "Fine by me." in _page(reviewer, synonyms_in_review).text


def test_a_review_pages_queries_do_not_grow_with_its_history(ns_a: Namespace, editor: Any, reviewer: Any) -> None:
    def publish(count: int) -> None:
        for n in range(count):
            content = {"template": f"Answer from ${{base_url}}, revision {n}."}
            text_publish_as_system(namespace=ns_a, kind=TextKind.PROMPT, key="chat", content=content, note="t")

    def queries(version: TextVersion) -> int:
        client = as_user(reviewer)
        url = reverse("admin:knowledge_textversion_change", args=[version.pk])
        client.get(url)  # warm the session
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    publish(2)
    latest = TextVersion.objects.filter(text__key="chat").order_by("-number").first()
    assert latest is not None
    few = queries(latest)
    publish(10)
    latest = TextVersion.objects.filter(text__key="chat").order_by("-number").first()
    assert latest is not None and latest.number == 12
    assert queries(latest) == few <= 16  # the admin pages' budget (tests/knowledge/test_admin_queries.py)


def test_a_doc_pages_draft_shows_its_cost_and_markdown_while_typed(
    ns_a: Namespace, editor: Any, reviewer: Any, outsider: Any
) -> None:
    draft = text_draft(namespace=ns_a, kind=TextKind.DOC, key="guide", actor=editor)
    assert "eg-live" in _page(editor, draft).text and "tokens: title and body" in _page(editor, draft).text
    url = reverse("admin:knowledge_textversion_livepreview", args=[draft.pk])
    typed = {"title": "Guide", "body": "Read **the entries** first.<script>alert(1)</script>", "position": "0"}
    answer = as_user(editor).post(url, typed).json()
    assert answer["tokens"] == estimate_tokens("GuideRead **the entries** first.<script>alert(1)</script>")
    assert "<strong>the entries</strong>" in answer["html"] and "<script" not in answer["html"]  # sanitised
    assert as_user(reviewer).post(url, typed).status_code == 403  # an editor's help, not a reviewer's
    assert as_user(outsider).post(url, typed).status_code == 404
    assert as_user(editor).get(url).status_code == 405
    draft.refresh_from_db()
    assert draft.content == {"title": "", "body": "", "position": 0}  # nothing was saved


def test_the_review_queue_lists_texts_and_synonym_sets_waiting(
    prompt_in_review: TextVersion, synonyms_in_review: SynonymVersion, reviewer: Any, editor: Any, ns_a: Namespace
) -> None:
    queue = reverse("admin:knowledge_reviewitem_changelist")
    page = as_user(reviewer).get(queue).text
    assert "sets waiting (2)" in page
    assert reverse("admin:knowledge_textversion_change", args=[prompt_in_review.pk]) in page
    assert reverse("admin:knowledge_synonymversion_change", args=[synonyms_in_review.pk]) in page
    membership(editor, ns_a, Role.REVIEWER)  # their author reviews too, but not their own
    assert 'id="evergreen-texts-waiting"' not in as_user(editor).get(queue).text
