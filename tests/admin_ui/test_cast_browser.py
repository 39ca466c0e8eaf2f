"""A day with a cast, in Chromium: an editor and a reviewer of alpha, a reviewer of beta, a staff member
without roles. A prompt pack and a synonym set go from draft to published through the shared review page;
each person sees only what their roles allow, at 1280 px and on a 390 px phone, and axe finds nothing
serious on any page they visit."""

from __future__ import annotations

from typing import Any

import pytest

from knowledge.models import Namespace, Role, SynonymVersion, TextKind, TextVersion, VersionState
from knowledge.services.synonyms import SynonymContent, synonym_set_create
from knowledge.services.texts import text_draft, text_publish_as_system
from tests.accessibility import assert_accessible
from tests.browser import admin_log_in as log_in
from tests.browser import sideways_overflow
from tests.factories import UserFactory, membership

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
FIRST = "Answer from ${base_url} and cite entry IDs."
SECOND = "Answer from ${base_url} and cite every fact with its entry ID, in square brackets."


@pytest.fixture
def cast(ns_a: Namespace, ns_b: Namespace, editor: Any, reviewer: Any) -> dict[str, Any]:
    """edna edits alpha, rita reviews alpha, rob reviews beta, olga is staff with no role anywhere."""
    return {
        "edna": editor,
        "rita": reviewer,
        "rob": membership(UserFactory(username="rob"), ns_b, Role.REVIEWER),
        "olga": UserFactory(username="olga"),
    }


@pytest.fixture
def prompt_draft(ns_a: Namespace, cast: dict[str, Any]) -> TextVersion:
    text_publish_as_system(namespace=ns_a, kind=TextKind.PROMPT, key="chat", content={"template": FIRST}, note="t")
    return text_draft(namespace=ns_a, kind=TextKind.PROMPT, key="chat", actor=cast["edna"])


def test_a_prompt_pack_goes_through_review_and_nobody_else_sees_it(
    live_server: Any, page: Any, cast: dict[str, Any], prompt_draft: TextVersion
) -> None:
    base = live_server.url
    url = f"{base}/admin/knowledge/textversion/{prompt_draft.pk}/change/"

    # The editor types and submits without saving first: the typed text goes to review.
    log_in(page, base, "edna")
    page.goto(url)
    page.fill("#id_template", SECOND)
    page.wait_for_function(  # the live panel renders what is typed and what it costs
        "() => document.getElementById('eg-live-preview').textContent.includes('in square brackets')"
    )
    assert int(page.inner_text("#eg-live-tokens")) > 0
    assert page.query_selector("button.evergreen-approve") is None
    assert_accessible(page)
    page.click("button.evergreen-submit")
    page.wait_for_selector("text=saved, then submit done")
    assert page.query_selector("input[name=_save]") is None  # in review: read-only for its author too
    prompt_draft.refresh_from_db()
    assert prompt_draft.state == VersionState.IN_REVIEW and prompt_draft.content == {"template": SECOND}

    # A reviewer of another namespace and a staff member without roles find nothing.
    for outsider in ("rob", "olga"):
        log_in(page, base, outsider)
        assert "alpha/prompt/chat" not in page.content()  # not on their home page
        page.goto(url)
        assert SECOND not in page.content()
        # rob reviews elsewhere: "not found" on his home page; olga holds no role: the admin's refusal page
        assert page.is_visible("text=Perhaps it was deleted?" if outsider == "rob" else ".errornote")
        assert_accessible(page)

    # The reviewer finds it on the home page, reads the words that changed side by side, notes and approves.
    log_in(page, base, "rita")
    page.click("#awaiting-review >> text=alpha/prompt/chat v2")
    page.wait_for_selector("#changes")
    page.click("text=side by side (split)")
    page.wait_for_selector(".eg-diff-split", state="visible")
    assert page.is_visible(".eg-diff-split del >> text=IDs")
    assert page.is_visible(".eg-diff-split ins >> text=ID")
    assert sideways_overflow(page) == 0
    assert_accessible(page)
    page.fill("#eg-comment-text", "Square brackets match the entry pages.")
    page.click("text=Add note")
    page.wait_for_selector("#thread >> text=Square brackets match the entry pages.")
    page.click("button.evergreen-approve")
    page.wait_for_selector("text=approve done")
    page.click("button.evergreen-publish")
    page.wait_for_selector("text=publish done")
    prompt_draft.refresh_from_db()
    assert prompt_draft.state == VersionState.PUBLISHED

    # The history and the compare page, for every member.
    page.click("#history >> text=v1 → v2")
    page.wait_for_selector(".eg-compare-form")
    assert page.is_visible("#changes ins >> text=every fact with its")
    assert_accessible(page)


def test_a_rejected_synonym_set_is_revised_on_a_phone(
    live_server: Any, phone: Any, ns_a: Namespace, cast: dict[str, Any]
) -> None:
    content = SynonymContent.build(phrases=["token budget", "Token 预算"], two_way=True, enabled=True)
    _, version = synonym_set_create(namespace=ns_a, name="token budget", content=content, actor=cast["edna"])
    base = live_server.url
    url = f"{base}/admin/knowledge/synonymversion/{version.pk}/change/"

    log_in(phone, base, "edna")
    phone.goto(url)
    phone.click("button.evergreen-submit")
    phone.wait_for_selector("text=submit done")
    assert sideways_overflow(phone) == 0

    log_in(phone, base, "rita")
    phone.goto(url)
    assert phone.is_visible(".eg-diff-unified tr.eg-add >> text=Token 预算")  # a new set: every phrase added
    assert sideways_overflow(phone) == 0
    assert_accessible(phone)
    phone.fill("#eg-note", "Add “context budget” as well.")
    phone.click("button.evergreen-reject")
    phone.wait_for_selector("text=reject done")

    log_in(phone, base, "edna")
    phone.wait_for_selector("#rejected >> text=Add “context budget” as well.")  # where the author looks first
    assert_accessible(phone)
    phone.goto(url)
    assert phone.is_visible(".eg-rejected-note >> text=Add “context budget” as well.")
    phone.click("button.evergreen-revise")
    phone.wait_for_selector("text=a new draft from v1")
    assert sideways_overflow(phone) == 0
    assert_accessible(phone)
    revised = SynonymVersion.objects.get(synonym_set=version.synonym_set, number=2)
    assert revised.state == VersionState.DRAFT and revised.phrases == ["token budget", "Token 预算"]
